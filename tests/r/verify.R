# Reference numbers for tests/conformance/test_r_agreement.py. Run by hand (the test suite does not need R):
#   python tests/r/export_data.py && Rscript tests/r/verify.R "$(python -c 'import tempfile; print(tempfile.gettempdir())')/clusterstats-r"
# Produced with R 4.2.2, survey 4.1.1, clubSandwich 0.5.8 (Debian packages r-cran-survey,
# r-cran-clubsandwich).
suppressMessages({library(survey); library(clubSandwich)})
options(digits = 15)
run <- function(d, y, cl) {
  d$y <- d[[y]]; d$cl <- d[[cl]]
  des <- svydesign(ids = ~cl, data = d)                       # unweighted, one stage
  m <- svymean(~y, des, deff = "replace")
  cat(y, "by", cl, "\n")
  cat("  mean", coef(m), "se_cr1", SE(m), "deff", deff(m), "degf", degf(des), "\n")
  if (all(d$y %in% c(0, 1))) {
    kg <- svyciprop(~y, des, method = "beta", df = degf(des))  # Korn-Graubard
    cat("  korn_graubard", attr(kg, "ci"), "\n")
  }
  fit <- lm(y ~ 1, data = d)
  ct <- coef_test(fit, vcov = "CR2", cluster = d$cl, test = "Satterthwaite")
  ci <- conf_int(fit, vcov = "CR2", cluster = d$cl, level = 0.95)
  cat("  cr2_se", ct$SE, "cr2_df", ct$df_Satt, "cr2_ci", ci$CI_L, ci$CI_U, "\n")
}
dir <- commandArgs(trailingOnly = TRUE)[1]  # the folder export_data.py printed
run(read.csv(file.path(dir, "mixtral.csv")), "correct", "src")
tau <- read.csv(file.path(dir, "tau.csv"))
run(tau, "reward", "user_id")
run(tau, "n_messages", "user_id")
