# Reference values for weighted (Hajek) means: R survey's svymean and svyciprop on survey's
# own California API data. Run from the repository root (the test suite does not need R):
#   Rscript tests/r/weights.R
# Produced with R 4.2.2, survey 4.1.1 (Debian r-cran-survey). It writes the columns it uses
# to tests/reference/data/ and prints "key value(s)" lines, kept beside the tests in
# tests/stats/test_weights.py.
suppressMessages(library(survey))
options(digits = 17)
p <- function(key, ...) cat(key, sprintf("%.17g", c(...)), "\n")
data(api)

# apiclus2: two-stage cluster sample of schools within districts, analysed as clustered by
# district (the first stage) with the sampling weights pw.
clus <- data.frame(dnum = apiclus2$dnum, snum = apiclus2$snum, pw = apiclus2$pw,
                   api00 = apiclus2$api00, wide = as.numeric(apiclus2$sch.wide == "Yes"))
write.csv(clus, xzfile("tests/reference/data/apiclus2.csv.xz"), row.names = FALSE)
des <- svydesign(ids = ~dnum, weights = ~pw, data = clus)
m <- svymean(~api00, des, deff = "replace")
p("apiclus2.api00.mean", coef(m)); p("apiclus2.api00.se", SE(m)); p("apiclus2.degf", degf(des))
p("apiclus2.api00.deff", deff(m))
w <- svymean(~wide, des)
p("apiclus2.wide.mean", coef(w)); p("apiclus2.wide.se", SE(w))
ci <- svyciprop(~wide, des, method = "beta", df = degf(des))
p("apiclus2.wide.beta", attr(ci, "ci"))

# apistrat: stratified (by school type) sample of schools, each school its own cluster.
strat <- data.frame(snum = apistrat$snum, stype = as.character(apistrat$stype),
                    pw = apistrat$pw, api00 = apistrat$api00,
                    wide = as.numeric(apistrat$sch.wide == "Yes"))
write.csv(strat, xzfile("tests/reference/data/apistrat.csv.xz"), row.names = FALSE)
des <- svydesign(ids = ~1, strata = ~stype, weights = ~pw, data = strat)
m <- svymean(~api00, des)
p("apistrat.api00.mean", coef(m)); p("apistrat.api00.se", SE(m)); p("apistrat.degf", degf(des))
w <- svymean(~wide, des)
p("apistrat.wide.mean", coef(w)); p("apistrat.wide.se", SE(w))
ci <- svyciprop(~wide, des, method = "beta", df = degf(des))
p("apistrat.wide.beta", attr(ci, "ci"))
