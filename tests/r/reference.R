# Recomputes, in R, the values of tests/reference/methods_reference_values.json that R
# packages compute (datasets D1, D2, D3; the data are written out below). Run by hand from the
# repository root (the test suite does not need R):
#   Rscript tests/r/reference.R
# Produced with R 4.2.2, survey 4.1.1, sandwich 3.0.2, clubSandwich 0.5.8, lme4 (Debian
# packages r-cran-survey, r-cran-sandwich, r-cran-clubsandwich, r-cran-lme4). Every line
# printed is "key value(s)", keys as in the JSON file.
suppressMessages({library(survey); library(sandwich); library(clubSandwich); library(lme4)})
options(digits = 15, warn = -1)  # no weights given: survey says it assumes equal ones
p <- function(key, ...) cat(key, sprintf("%.15g", c(...)), "\n")

# D1: 8 clusters of sizes 2,3,5,4,6,1,8,3 with 1,3,2,4,1,1,6,0 successes, 1s first.
sizes <- c(2, 3, 5, 4, 6, 1, 8, 3); succ <- c(1, 3, 2, 4, 1, 1, 6, 0)
d1 <- data.frame(
  cl = rep(seq_along(sizes), sizes),
  y = unlist(mapply(function(n, s) c(rep(1, s), rep(0, n - s)), sizes, succ))
)
des <- svydesign(ids = ~cl, data = d1)
m <- svymean(~y, des, deff = "replace")
p("D1.mean_variance.CR1.mean", coef(m))
p("D1.mean_variance.CR1.var", SE(m)^2)                         # survey: CR1 with G/(G-1)
fit <- lm(y ~ 1, data = d1)
p("D1.mean_variance.CR0.var", vcovCL(fit, cluster = ~cl, type = "HC0", cadjust = FALSE))
p("D1.mean_variance.CR1.var(sandwich)", vcovCL(fit, cluster = ~cl, type = "HC0"))
ct <- coef_test(fit, vcov = "CR2", cluster = d1$cl, test = "Satterthwaite")
p("D1.mean_variance.CR2_general.var", ct$SE^2)
p("D1.mean_variance.CR2_general.df_satt", ct$df_Satt)
p("D1.mean_variance.survey_deff_replace", deff(m))
kg <- svyciprop(~y, des, method = "beta", df = degf(des))
p("D1.korn_graubard_design_based", attr(kg, "ci"))
a <- anova(lm(y ~ factor(cl), data = d1))
msb <- a[1, "Mean Sq"]; msw <- a[2, "Mean Sq"]; N <- nrow(d1); G <- length(sizes)
n0 <- (N - sum(sizes^2) / N) / (G - 1)
p("D1.icc_anova.MSB", msb); p("D1.icc_anova.MSW", msw); p("D1.icc_anova.n0", n0)
p("D1.icc_anova.rho", (msb - msw) / (msb + (n0 - 1) * msw))

# D2: continuous, 5 unequal clusters (unweighted CR1 and CR2).
d2 <- data.frame(
  cl = rep(1:5, c(3, 4, 2, 5, 3)),
  y = c(2.1, 2.5, 1.9, 3.4, 3.0, 3.8, 3.6, 1.2, 1.6, 2.8, 2.2, 2.6, 3.1, 2.9, 4.0, 3.7, 4.4)
)
fit2 <- lm(y ~ 1, data = d2)
p("D2.mean_variance.unweighted_CR1.var", vcovCL(fit2, cluster = ~cl, type = "HC0"))
ct2 <- coef_test(fit2, vcov = "CR2", cluster = d2$cl, test = "Satterthwaite")
p("D2.mean_variance.unweighted_CR2.var", ct2$SE^2)
p("D2.mean_variance.unweighted_CR2.df", ct2$df_Satt)
reml <- lmer(y ~ 1 + (1 | cl), data = d2, REML = TRUE)
vc <- as.data.frame(VarCorr(reml))$vcov
p("D2.reml_lmer_equivalent.icc", vc[1] / sum(vc))

# D3: balanced 6 x 4.
y3 <- c(0.06, 1.34, -0.49, -0.62, 0.79, 0.66, 0.4, -0.63, -0.3, 0.42, -1.62, -0.73,
        -2.79, -2.18, -2.73, -1.13, -1.72, -0.18, -0.3, -0.64, -3.51, -1.53, -1.04, -0.88)
d3 <- data.frame(cl = rep(1:6, each = 4), y = y3)
fit3 <- lm(y ~ 1, data = d3)
ct3 <- coef_test(fit3, vcov = "CR2", cluster = d3$cl, test = "Satterthwaite")
p("D3.balanced_CR2.CR2_var", ct3$SE^2)
p("D3.balanced_CR2.satterthwaite_df(=G-1)", ct3$df_Satt)
m3 <- svymean(~y, svydesign(ids = ~cl, data = d3), deff = "replace")
p("D3.identity_empirical_deff.survey_deff_replace", deff(m3))
