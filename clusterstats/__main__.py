import sys

from clusterstats.cli import main

sys.exit(main())
