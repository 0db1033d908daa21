# Reference values for tests/stats/test_strata.py (R 4.2.2, survey 4.1.1):
#   python tests/r/export_data.py && Rscript tests/r/strata.R "$(python -c 'import tempfile; print(tempfile.gettempdir())')/clusterstats-r"
suppressMessages(library(survey))
options(warn = -1)
dir <- commandArgs(trailingOnly = TRUE)[1]  # the folder export_data.py printed
x <- read.csv(file.path(dir, "mixtral_full.csv"))
des <- svydesign(ids = ~src, strata = ~category, data = x)
p <- function(label, value) cat(sprintf("%s %.15g\n", label, value))
# pooled: svymean(~correct, des, deff="replace")
r <- svymean(~correct, des, deff = "replace")
p("pooled.mean", coef(r)); p("pooled.se", SE(r)); p("pooled.deff", deff(r)); p("degf", degf(des))
# Korn-Graubard: svyciprop(~correct, des, method="beta", df=degf(des))
kg <- svyciprop(~correct, des, method = "beta", df = degf(des))
p("kg.low", confint(kg)[1]); p("kg.high", confint(kg)[2])
# mean of cluster means: weights 1/n_g
x$w <- 1 / ave(x$correct, x$src, FUN = length)
dw <- svydesign(ids = ~src, strata = ~category, weights = ~w, data = x)
r <- svymean(~correct, dw); p("cluster_mean.mean", coef(r)); p("cluster_mean.se", SE(r))
# mean of stratum means: svycontrast of svyby(..., covmat=TRUE) with weights 1/H
b <- svyby(~correct, ~category, des, svymean, covmat = TRUE)
H <- nrow(b)
m <- svycontrast(b, rep(1 / H, H)); p("stratum_mean.mean", coef(m)); p("stratum_mean.se", SE(m))
# lonely strata: keep one source of "law" (a single-cluster stratum)
law <- unique(x$src[x$category == "law"])
y <- x[x$category != "law" | x$src == law[1], ]
for (opt in c("adjust", "average", "certainty")) {
  options(survey.lonely.psu = opt)
  dl <- svydesign(ids = ~src, strata = ~category, data = y)
  r <- svymean(~correct, dl); p(paste0("lonely.", opt, ".se"), SE(r))
}
p("lonely.mean", coef(r))
# paired: the per-question difference Llama-3.1-8B - Mixtral, svymean(~diff, des)
a <- d[d$model == "Meta-Llama-3.1-8B-Instruct", c("question_id", "src", "category", "correct")]
b <- d[d$model == "Mixtral-8x7B-Instruct-v0.1", c("question_id", "correct")]
m <- merge(a, b, by = "question_id")
m$diff <- m$correct.x - m$correct.y
options(survey.lonely.psu = "fail")
dd <- svydesign(ids = ~src, strata = ~category, data = m)
r <- svymean(~diff, dd); p("paired.delta", coef(r)); p("paired.se", SE(r))
