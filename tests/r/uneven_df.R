# Reference values for the degrees of freedom of uneven cluster sizes (method "cr2_ik"):
# the Satterthwaite df of the CR2 (Bell & McCaffrey 2002) variance of a mean under a
# random-effects working model whose between-cluster covariance is the Moulton (1986)
# moment estimate from within-cluster pairs of residuals, truncated at 0 (Imbens & Kolesar
# 2016, section 5; their R package dfadjust computes it as dfadjustSE(fit, cl, IK = TRUE,
# rho0 = TRUE), which gives these numbers too). Written here with explicit N x N matrices,
# independently of the O(G) closed form in clusterstats/core/variance.py:
#   df = tr(M W)^2 / tr(M W M W),  M = sum_g a_g a_g',  a_g = (I - H) A_g 1_g
# with H = J/N (an intercept), A_g = (I - H_gg)^(-1/2) on cluster g's rows, and W the
# working covariance sig I + rho (1 if two rows share a cluster).
# Run from the repository root (the test suite does not need R):
#   Rscript tests/r/uneven_df.R
# With jackknife = TRUE the same for CR3 (A_g = (I - H_gg)^(-1), method "cr3_ik"); and CR3
# itself from clubSandwich (vcovCR(type = "CR3") with coef_test(test = "Satterthwaite")).
# Produced with R 4.2.2 and clubSandwich 0.5.8 (Debian r-cran-clubsandwich). It writes the simulated data it uses to tests/reference/data/ and
# prints "key value" lines, kept beside the tests in tests/stats/test_uneven_df.py.
options(digits = 17)
p <- function(key, ...) cat(key, sprintf("%.17g", c(...)), "\n")

msqrtinv <- function(A) {
  e <- eigen(A, symmetric = TRUE)
  e$vectors %*% diag(1 / sqrt(pmax(e$values, 1e-300)), nrow(A)) %*% t(e$vectors)
}

ik <- function(y, cl, jackknife = FALSE) {
  cl <- as.integer(factor(cl))
  n <- length(y)
  u <- y - mean(y)
  totals <- tapply(u, cl, sum)
  sizes <- tabulate(cl)
  ssr <- sum(u^2)
  rho <- max((sum(totals^2) - ssr) / (sum(sizes^2) - n), 0)  # Moulton, truncated at 0
  sig <- max(ssr / n - rho, 0)
  same <- outer(cl, cl, "==")
  W <- sig * diag(n) + rho * same
  IH <- diag(n) - matrix(1 / n, n, n)
  M <- matrix(0, n, n)
  for (g in seq_along(sizes)) {
    rows <- which(cl == g)
    A <- msqrtinv(IH[rows, rows, drop = FALSE])
    if (jackknife) A <- A %*% A  # CR3: (I - H_gg)^(-1)
    v <- numeric(n)
    v[rows] <- A %*% rep(1, length(rows))
    a <- IH %*% v
    M <- M + a %*% t(a)
  }
  MW <- M %*% W
  c(df = sum(diag(MW))^2 / sum(MW * t(MW)), icc = rho / (rho + sig))
}

# D1 of the methods reference (8 clusters of 2, 3, 5, 4, 6, 1, 8, 3 rows).
sizes <- c(2, 3, 5, 4, 6, 1, 8, 3); succ <- c(1, 3, 2, 4, 1, 1, 6, 0)
y <- unlist(mapply(function(n, s) c(rep(1, s), rep(0, n - s)), sizes, succ))
r <- ik(y, rep(seq_along(sizes), sizes))
p("d1.df", r["df"]); p("d1.icc", r["icc"])

# Uneven clusters with a size-related rate: 30 clusters of 1 to 120 rows, binary.
set.seed(20261206)
n_g <- c(1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 14, 16, 18, 20, 22, 25, 28, 31, 35, 40,
         46, 55, 66, 80, 100, 120)
cl <- rep(seq_along(n_g), n_g)
rate <- plogis(rnorm(30, 0.3, 0.8) - 0.006 * n_g)[cl]
uneven <- data.frame(cluster = cl, y = as.numeric(runif(length(cl)) < rate))
write.csv(uneven, xzfile("tests/reference/data/uneven.csv.xz"), row.names = FALSE)
r <- ik(uneven$y, uneven$cluster)
p("uneven.df", r["df"]); p("uneven.icc", r["icc"])

# A continuous score of the same clusters (the rate plus noise).
uneven$score <- rate + rnorm(length(cl), 0, 0.3)
write.csv(uneven, xzfile("tests/reference/data/uneven.csv.xz"), row.names = FALSE)
r <- ik(uneven$score, uneven$cluster)
p("uneven_score.df", r["df"]); p("uneven_score.icc", r["icc"])

# CR3: the jackknife, with the df of uneven sizes, and clubSandwich's CR3 (independent rows)
r <- ik(uneven$score, uneven$cluster, jackknife = TRUE)
p("uneven_score.cr3_ik.df", r["df"])
suppressMessages(library(clubSandwich))
fit <- lm(score ~ 1, data = uneven)
v3 <- vcovCR(fit, cluster = uneven$cluster, type = "CR3")
p("uneven_score.cr3.variance", v3[1, 1])
p("uneven_score.cr3.df", coef_test(fit, vcov = v3, test = "Satterthwaite")$df_Satt)
