"""The numeric core: plain numpy/scipy functions on per-cluster sums.

Nothing in this package imports pandas or xarray (a test enforces it).
"""
