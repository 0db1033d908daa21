# Reference values of tests/core/test_core_ranks.py from the authors' own implementation of
# rank confidence sets, the R package csranks 1.2.3 (Wilhelm & Morgen; CRAN), which
# implements Mogstad, Romano, Shaikh & Wilhelm (2024, Review of Economic Studies).
#
# csranks draws its critical values from MASS::mvrnorm. To compare bound for bound, this
# script fixes those draws: it draws R vectors once (set.seed, rnorm) and replaces
# MASS::mvrnorm by a function that returns the columns of those draws that csranks asks for
# (found by matching the requested covariance's diagonal, which is distinct in every case
# here). The standard normals go to the JSON; the Python test multiplies them by the same
# Cholesky factor and feeds them to clusterstats.core.ranks.rank_sets as its deviations.
#
# Run with the csranks R sources (the CRAN tarball's R/ directory, or github
# cran/csranks): ranks.R, diffmeans.R, rank_utils.R, argument_checks.R,
# utilityfunctions.R, and its data/pisa2018.rda:
#
#   Rscript tests/reference/csranks_reference.R CSRANKS_SOURCE_DIR > tests/reference/csranks_ranks.json
#
# Needs r-base-core, r-cran-mass and r-cran-jsonlite (Debian).

args <- commandArgs(trailingOnly = TRUE)
source_dir <- args[1]
for (f in c("ranks.R", "diffmeans.R", "rank_utils.R", "argument_checks.R", "utilityfunctions.R")) {
  source(file.path(source_dir, f))
}
load(file.path(source_dir, "pisa2018.rda"))
library(MASS)
library(jsonlite)

fixed_draws <- NULL
fixed_cov <- NULL
replacement <- function(n, mu, Sigma, ...) {
  d <- diag(as.matrix(Sigma))
  columns <- match(d, diag(fixed_cov))
  stopifnot(!anyNA(columns), n == nrow(fixed_draws))
  fixed_draws[, columns, drop = FALSE]
}
utils::assignInNamespace("mvrnorm", replacement, ns = "MASS")

run_case <- function(name, x, Sigma, R, seed, taus) {
  set.seed(seed)
  fixed_cov <<- Sigma
  # the draws: standard normals, rounded to 4 decimals so that the JSON stays small, times
  # the Cholesky factor of Sigma (the Python test multiplies the same way)
  z <- round(matrix(rnorm(R * length(x)), R, length(x)), 4)
  fixed_draws <<- z %*% chol(Sigma)
  simul <- csranks(x, Sigma, coverage = 0.95, simul = TRUE, stepdown = TRUE, R = R)
  single <- csranks(x, Sigma, coverage = 0.95, simul = TRUE, stepdown = FALSE, R = R)
  marg <- csranks(x, Sigma, coverage = 0.95, simul = FALSE, stepdown = TRUE, R = R)
  simul90 <- csranks(x, Sigma, coverage = 0.90, simul = TRUE, stepdown = TRUE, R = R)
  best <- lapply(taus, function(tau) which(cstaubest(x, Sigma, tau = tau, coverage = 0.95, R = R)))
  list(
    name = name, x = x, Sigma = Sigma, normals = z,
    call = "csranks(x, Sigma, coverage, simul, stepdown, R); cstaubest(x, Sigma, tau, coverage = 0.95, R)",
    simultaneous = list(L = simul$L, U = simul$U),
    single_step = list(L = single$L, U = single$U),
    marginal = list(L = marg$L, U = marg$U),
    simultaneous_90 = list(L = simul90$L, U = simul90$U),
    taus = taus, taubest = best
  )
}

set.seed(20261203)
p <- 10
A <- matrix(rnorm(p * p), p, p)
Sigma <- (crossprod(A) + diag(seq(1, 2, length.out = p))) / 4000
x <- seq(0.9, 0.45, length.out = p) + rnorm(p) * 0.02
synthetic <- run_case("10 correlated populations", x, Sigma, R = 400, seed = 7, taus = c(1, 3))

keep <- !is.na(pisa2018$math_score)
math <- pisa2018[keep, ]
pisa <- run_case(
  "PISA 2018 math, OECD countries (csranks' data(pisa2018); vignette 'Inference for Ranks')",
  math$math_score, diag(math$math_se^2), R = 300, seed = 11, taus = c(1, 5)
)
pisa$jurisdiction <- math$jurisdiction

cat(toJSON(list(
  source = "csranks 1.2.3 (CRAN), R sources run with MASS::mvrnorm replaced by fixed draws",
  cases = list(synthetic, pisa)
), digits = NA, auto_unbox = TRUE, matrix = "rowmajor"))
