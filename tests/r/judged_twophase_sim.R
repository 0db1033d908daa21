# Which of survey's two-phase variances fits the judged designs of tests/r/judged.R? A
# simulation, run from the repository root (about 3 minutes):
#   Rscript tests/r/judged_twophase_sim.R > tests/reference/judged_twophase_sim_output.txt
# Produced with R 4.2.2, survey 4.1.1. Each replicate draws a fresh data set from the
# generator of tests/reference/judged_fixture.py (30 clusters of 2-9 rows, human ICC 0.3,
# judge with a cluster bias; no clipping, so the mean is 3), labels 12 whole clusters (A) or
# 2 rows of every cluster (B), and records the human-only and GREG (calibrated on ~judge)
# means with three variance estimates: twophase's default method = "full" with no phase-1
# probabilities ("full"), method = "simple" ("simple"), and method = "full" with phase-1
# probabilities 1e-12 ("full, phase-1 probs"). NaN variance estimates are left out of the
# mean variance, NaN and negative ones out of the coverage; both are counted.
suppressMessages(library(survey))
set.seed(20261205)
reps <- 1500
gen <- function() {
  k <- 30; m <- sample(2:9, k, TRUE); cl <- rep(1:k, m)
  h <- 3 + rnorm(k, 0, 0.6)[cl] + rnorm(length(cl), 0, sqrt(0.36 * 7 / 3))
  j <- 3 + 0.6 * (h - 3) + rnorm(k, 0, 0.3)[cl] + rnorm(length(cl), 0, 0.85)
  lc <- cl %in% sample(1:k, 12)
  lr <- unlist(lapply(m, function(n) { z <- rep(FALSE, n); z[sample(n, min(n, 2))] <- TRUE; z }))
  data.frame(cluster = cl, judge = j, human_full = h, lc = lc, lr = lr, p1 = 1e-12)
}
design <- function(x, des, variant) {
  pr <- if (variant == "fullp") list(~p1, NULL) else NULL
  mt <- if (variant == "simple") "simple" else "full"
  if (des == "A") {
    x$human <- ifelse(x$lc, x$human_full, NA)
    twophase(id = list(~cluster, ~cluster), probs = pr, subset = ~lc, data = x, method = mt)
  } else {
    x$human <- ifelse(x$lr, x$human_full, NA)
    twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster), probs = pr, subset = ~lr,
             data = x, method = mt)
  }
}
variants <- c(full = "full", simple = "simple", fullp = "full, phase-1 probs")
res <- t(replicate(reps, {
  x <- gen()
  unlist(lapply(c("A", "B"), function(des) unlist(lapply(names(variants), function(v) {
    d <- design(x, des, v)
    m0 <- svymean(~human, d)
    m1 <- svymean(~human, calibrate(d, phase = 2, formula = ~judge, calfun = "linear"))
    setNames(c(coef(m0), vcov(m0), coef(m1), vcov(m1)),
             paste(des, v, c("est0", "var0", "est1", "var1"), sep = "."))
  }))))
}))
cat("replicates", reps, "(true mean 3)\n")
for (des in c("A", "B")) for (k in c("0", "1")) {
  est <- res[, paste(des, "full", paste0("est", k), sep = ".")]
  cat(sprintf("\n%s %s: empirical variance %.5f, mean estimate %.4f\n",
              if (des == "A") "whole clusters" else "rows in every cluster",
              if (k == "0") "svymean(~human, d)" else "GREG svymean(~human, calibrate(d, ...))",
              var(est), mean(est)))
  for (v in names(variants)) {
    vh <- res[, paste(des, v, paste0("var", k), sep = ".")]
    ok <- is.finite(vh)
    pos <- ok & vh > 0
    cat(sprintf("  %-20s mean variance estimate %.5f, ratio %.3f, normal 95%% coverage %.3f%s\n",
                variants[[v]], mean(vh[ok]), mean(vh[ok]) / var(est),
                mean(abs(est[pos] - 3) / sqrt(vh[pos]) < qnorm(0.975)),
                if (any(!pos)) sprintf(" (%d NaN, %d negative)", sum(!ok), sum(vh[ok] <= 0))
                else ""))
  }
}
