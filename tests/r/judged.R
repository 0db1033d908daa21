# Reference values for prediction-powered (judge + human) estimates of a clustered mean: the
# survey package's two-phase GREG (calibration) estimator. Run from the repository root (the
# test suite does not need R):
#   Rscript tests/r/judged.R > tests/reference/judged_survey_output.txt 2>&1
# Produced with R 4.2.2, survey 4.1.1, jsonlite. It reads tests/reference/data/judged_fixture.csv
# (written by tests/reference/judged_fixture.py) and writes tests/reference/judged_survey.json.
# Every value stored in the JSON is computed on the line just above the `out$...` that keeps it,
# and printed with all its digits.
suppressMessages(library(survey))
suppressMessages(library(jsonlite))
options(digits = 17)
show <- function(label, x) { cat("\n##", label, "\n"); print(x) }
# A mean's point estimate, standard error and, for a two-phase design, the phase 1 and phase 2
# parts of its variance (attr(vcov(.), "phases"): survey's Sarndal et al. 9.3 decomposition).
stat <- function(call, m) {
  v <- vcov(m)
  r <- list(call = call, estimate = unname(coef(m)[1]), se = unname(SE(m)[1]))
  ph <- attr(v, "phases")
  if (!is.null(ph)) {
    r$var_phase1 <- unname(ph$phase1[1, 1])
    r$var_phase2 <- unname(ph$phase2[1, 1])
  }
  r
}
coefs <- function(call, g) {
  list(call = call, intercept = unname(coef(g)[1]), slope = unname(coef(g)[2]),
       se = unname(SE(g)))
}
out <- list(
  produced_by = "Rscript tests/r/judged.R",
  r_version = R.version.string,
  survey_version = as.character(packageVersion("survey"))
)

df <- read.csv("tests/reference/data/judged_fixture.csv")
show("fixture", summary(df))
out$fixture <- list(file = "tests/reference/data/judged_fixture.csv", n_rows = nrow(df),
                    n_clusters = length(unique(df$cluster)), mean_judge = mean(df$judge))

# ---- Design A: whole clusters labelled ------------------------------------------------------
# Phase 1: every row, clusters sampled with replacement (no fpc). Phase 2: a simple random
# sample of whole clusters; survey infers its fpc from the phase-1 sample (30 clusters, of
# which 12 are taken, so probability 0.4 per cluster).
# survey only uses phase-2 variables on the phase-2 subset: `human` is NA elsewhere.
dfa <- df
dfa$human <- ifelse(dfa$labelled_clusters, dfa$human_full, NA)
d <- twophase(id = list(~cluster, ~cluster), subset = ~labelled_clusters, data = dfa)
show("A design", d)
show("A phase-2 fpc (popsize, sampsize) and probabilities",
     unique(cbind(popsize = d$phase2$fpc$popsize[, 1], sampsize = d$phase2$fpc$sampsize[, 1],
                  prob = d$phase2$prob)))
dc <- calibrate(d, phase = 2, formula = ~judge, calfun = "linear")
m <- svymean(~human, dc)
show("A svymean(~human, dc)", m); show("A phases", attr(vcov(m), "phases"))
out$whole_clusters <- list(
  design = "twophase(id = list(~cluster, ~cluster), subset = ~labelled_clusters, data = df)",
  calibration = "dc <- calibrate(d, phase = 2, formula = ~judge, calfun = \"linear\")",
  phase2_fpc = list(popsize = d$phase2$fpc$popsize[1, 1], sampsize = d$phase2$fpc$sampsize[1, 1],
                    prob = d$phase2$prob[1]),
  degf = degf(d),
  n_labelled_rows = sum(dfa$labelled_clusters),
  n_labelled_clusters = length(unique(dfa$cluster[dfa$labelled_clusters])),
  greg_mean = stat("svymean(~human, dc)", m)
)
g <- svyglm(human ~ judge, d)
show("A svyglm(human ~ judge, d)", summary(g)$coefficients)
out$whole_clusters$greg_regression <- coefs("coef(svyglm(human ~ judge, d))", g)
# GREG identity: with an intercept in the calibration, the calibrated mean is B0 + B1 * (phase-1
# mean of judge), B from the phase-2 weighted regression above.
out$whole_clusters$greg_identity <- list(
  call = "coef(g)[1] + coef(g)[2] * mean(df$judge)",
  value = unname(coef(g)[1] + coef(g)[2] * mean(dfa$judge)))
show("A identity", out$whole_clusters$greg_identity$value)
m <- svymean(~human, d)
show("A svymean(~human, d)", m); show("A phases", attr(vcov(m), "phases"))
out$whole_clusters$human_only <- stat("svymean(~human, d)", m)
# survey's older variance, method = "simple" ("correct for designs with simple random sampling
# at phase one and stratified random sampling at phase two", ?twophase): same estimates, another
# phase-1 variance.
ds <- twophase(id = list(~cluster, ~cluster), subset = ~labelled_clusters, data = dfa,
               method = "simple")
m <- svymean(~human, calibrate(ds, phase = 2, formula = ~judge, calfun = "linear"))
show("A simple: svymean(~human, calibrate(ds, ...))", m); show("phases", attr(vcov(m), "phases"))
out$whole_clusters$method_simple <- list(
  design = paste("ds <- twophase(id = list(~cluster, ~cluster), subset = ~labelled_clusters,",
                 "data = df, method = \"simple\")"),
  greg_mean = stat("svymean(~human, calibrate(ds, phase = 2, formula = ~judge, calfun = \"linear\"))", m))
m <- svymean(~human, ds)
show("A simple: svymean(~human, ds)", m); show("phases", attr(vcov(m), "phases"))
out$whole_clusters$method_simple$human_only <- stat("svymean(~human, ds)", m)
# With no phase-1 probabilities or fpc, method = "full" treats the phase-1 sample as independent
# ROWS: survey:::Dcheck_multi_subset returns the identity matrix when `all(probs == 1) &&
# withreplacement`, so the phase-1 variance ignores ~cluster. Giving phase-1 probabilities (a
# constant 1e-12: an effectively infinite population of clusters, sampled with replacement;
# the values move by about 1e-10 relative from 1e-9 to 1e-12) makes it use the clusters.
# tests/r/judged_twophase_sim.R compares the three variances by simulation.
dfa$p1 <- 1e-12
dp <- twophase(id = list(~cluster, ~cluster), probs = list(~p1, NULL),
               subset = ~labelled_clusters, data = dfa)
m <- svymean(~human, calibrate(dp, phase = 2, formula = ~judge, calfun = "linear"))
show("A phase-1 probs: svymean(~human, calibrate(dp, ...))", m)
show("phases", attr(vcov(m), "phases"))
out$whole_clusters$phase1_probs <- list(
  design = paste("dp <- twophase(id = list(~cluster, ~cluster), probs = list(~p1, NULL),",
                 "subset = ~labelled_clusters, data = df) with df$p1 = 1e-12"),
  greg_mean = stat("svymean(~human, calibrate(dp, phase = 2, formula = ~judge, calfun = \"linear\"))", m))
m <- svymean(~human, dp)
show("A phase-1 probs: svymean(~human, dp)", m); show("phases", attr(vcov(m), "phases"))
out$whole_clusters$phase1_probs$human_only <- stat("svymean(~human, dp)", m)
# For comparison: the 12 labelled clusters alone as a one-phase cluster sample (CR1-type SE).
m <- svymean(~human, svydesign(ids = ~cluster, weights = ~1, data = subset(dfa, labelled_clusters)))
show("A one-phase labelled clusters only", m)
out$whole_clusters$labelled_only_one_phase <- stat(
  "svymean(~human, svydesign(ids = ~cluster, weights = ~1, data = subset(df, labelled_clusters)))", m)

# ---- Design B: 2 rows labelled inside every cluster -------------------------------------------
# Phase 2 is stratified random sampling of rows with the phase-1 cluster as stratum; survey
# infers the fpc as the cluster's size (its phase-1 rows) and the probability 2 / size (1 for a
# cluster of 2 rows, which then adds no phase-2 variance).
dfb <- df
dfb$human <- ifelse(dfb$labelled_rows, dfb$human_full, NA)
d <- twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster), subset = ~labelled_rows,
              data = dfb)
show("B design", d)
fpcb <- unique(data.frame(cluster = dfb$cluster[dfb$labelled_rows],
                          popsize = d$phase2$fpc$popsize[, 1],
                          sampsize = d$phase2$fpc$sampsize[, 1], prob = d$phase2$prob))
show("B phase-2 fpc by cluster", fpcb)
dc <- calibrate(d, phase = 2, formula = ~judge, calfun = "linear")
m <- svymean(~human, dc)
show("B svymean(~human, dc)", m); show("B phases", attr(vcov(m), "phases"))
out$rows_within_clusters <- list(
  design = paste("twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster),",
                 "subset = ~labelled_rows, data = df)"),
  calibration = "dc <- calibrate(d, phase = 2, formula = ~judge, calfun = \"linear\")",
  phase2_fpc = list(cluster = fpcb$cluster, popsize = fpcb$popsize, sampsize = fpcb$sampsize,
                    prob = fpcb$prob),
  degf = degf(d),
  n_labelled_rows = sum(dfb$labelled_rows),
  greg_mean = stat("svymean(~human, dc)", m)
)
g <- svyglm(human ~ judge, d)
show("B svyglm(human ~ judge, d)", summary(g)$coefficients)
out$rows_within_clusters$greg_regression <- coefs("coef(svyglm(human ~ judge, d))", g)
out$rows_within_clusters$greg_identity <- list(
  call = "coef(g)[1] + coef(g)[2] * mean(df$judge)",
  value = unname(coef(g)[1] + coef(g)[2] * mean(dfb$judge)))
show("B identity", out$rows_within_clusters$greg_identity$value)
m <- svymean(~human, d)
show("B svymean(~human, d)", m); show("B phases", attr(vcov(m), "phases"))
out$rows_within_clusters$human_only <- stat("svymean(~human, d)", m)

ds <- twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster), subset = ~labelled_rows,
               data = dfb, method = "simple")
m <- svymean(~human, calibrate(ds, phase = 2, formula = ~judge, calfun = "linear"))
show("B simple: svymean(~human, calibrate(ds, ...))", m); show("phases", attr(vcov(m), "phases"))
out$rows_within_clusters$method_simple <- list(
  design = paste("ds <- twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster),",
                 "subset = ~labelled_rows, data = df, method = \"simple\")"),
  greg_mean = stat("svymean(~human, calibrate(ds, phase = 2, formula = ~judge, calfun = \"linear\"))", m))
m <- svymean(~human, ds)
show("B simple: svymean(~human, ds)", m); show("phases", attr(vcov(m), "phases"))
out$rows_within_clusters$method_simple$human_only <- stat("svymean(~human, ds)", m)

dfb$p1 <- 1e-12
dp <- twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster), probs = list(~p1, NULL),
               subset = ~labelled_rows, data = dfb)
m <- svymean(~human, calibrate(dp, phase = 2, formula = ~judge, calfun = "linear"))
show("B phase-1 probs: svymean(~human, calibrate(dp, ...))", m)
show("phases", attr(vcov(m), "phases"))
out$rows_within_clusters$phase1_probs <- list(
  design = paste("dp <- twophase(id = list(~cluster, ~1), strata = list(NULL, ~cluster),",
                 "probs = list(~p1, NULL), subset = ~labelled_rows, data = df) with df$p1 = 1e-12"),
  greg_mean = stat("svymean(~human, calibrate(dp, phase = 2, formula = ~judge, calfun = \"linear\"))", m))
m <- svymean(~human, dp)
show("B phase-1 probs: svymean(~human, dp)", m); show("phases", attr(vcov(m), "phases"))
out$rows_within_clusters$phase1_probs$human_only <- stat("svymean(~human, dp)", m)

# ---- survey's own example: two-stage sampling as two-phase (example(twophase)) ---------------
# Verbatim from survey's twophase.Rd. mu284 is a two-stage sample (5 clusters id1 of the 50
# in MU284, 3 units id2 of each cluster's n2). mu284.1 appends, for each cluster, n2 - 3
# copies of rows so that phase 1 holds all n2 units of each sampled cluster; phase 2 (`sub`)
# is the 15 original rows: stratified by cluster, fpc inferred as n2.
data(mu284)
ii <- with(mu284, c(1:15, rep(1:5, n2[1:5] - 3)))
mu284.1 <- mu284[ii, ]
mu284.1$id <- 1:nrow(mu284.1)
mu284.1$sub <- rep(c(TRUE, FALSE), c(15, 34 - 15))
dmu284 <- svydesign(id = ~id1 + id2, fpc = ~n1 + n2, data = mu284)
## first phase cluster sample, second phase stratified within cluster
d2mu284 <- twophase(id = list(~id1, ~id), strata = list(NULL, ~id1),
                    fpc = list(~n1, NULL), data = mu284.1, subset = ~sub)
show("mu284", mu284)
t1 <- svytotal(~y1, dmu284); t2 <- svytotal(~y1, d2mu284)
m1 <- svymean(~y1, dmu284); m2 <- svymean(~y1, d2mu284)
show("svytotal(~y1, dmu284)", t1); show("svytotal(~y1, d2mu284)", t2)
show("svymean(~y1, dmu284)", m1); show("svymean(~y1, d2mu284)", m2)
out$mu284_example <- list(
  source = "survey 4.1.1, man/twophase.Rd, example 'two-stage sampling as two-phase'",
  code = c("data(mu284)",
           "ii<-with(mu284, c(1:15, rep(1:5,n2[1:5]-3)))",
           "mu284.1<-mu284[ii,]",
           "mu284.1$id<-1:nrow(mu284.1)",
           "mu284.1$sub<-rep(c(TRUE,FALSE),c(15,34-15))",
           "dmu284<-svydesign(id=~id1+id2,fpc=~n1+n2, data=mu284)",
           "## first phase cluster sample, second phase stratified within cluster",
           "d2mu284<-twophase(id=list(~id1,~id),strata=list(NULL,~id1),",
           "                    fpc=list(~n1,NULL),data=mu284.1,subset=~sub)"),
  total_two_stage = stat("svytotal(~y1, dmu284)", t1),
  total_two_phase = stat("svytotal(~y1, d2mu284)", t2),
  mean_two_stage = stat("svymean(~y1, dmu284)", m1),
  mean_two_phase = stat("svymean(~y1, d2mu284)", m2)
)

# ---- mu284 in our setting: whole clusters labelled, a judge score on every row --------------
# mu284 has no second outcome (its columns are id1, n1, id2, y1, n2), so the "judge" here is a
# made-up deterministic proxy of y1: y2 = y1 + 3 * (id2 - 2) - (id1 %% 5). Phase 1 = the 15
# rows of mu284, clusters id1 (with replacement, no fpc, as in our setting); phase 2 = the
# clusters whose id1 is at most the median of the 5 id1 values (19, 31, 45: 3 of 5, 9 rows).
mu <- mu284
mu$y2 <- mu$y1 + 3 * (mu$id2 - 2) - (mu$id1 %% 5)
mu$labelled <- mu$id1 <= median(unique(mu$id1))
mu$human <- ifelse(mu$labelled, mu$y1, NA)
show("mu284 with judge y2", mu)
dm <- twophase(id = list(~id1, ~id1), subset = ~labelled, data = mu)
dmc <- calibrate(dm, phase = 2, formula = ~y2, calfun = "linear")
m <- svymean(~human, dmc)
show("mu284 svymean(~human, dmc)", m); show("phases", attr(vcov(m), "phases"))
gm <- svyglm(human ~ y2, dm)
show("mu284 svyglm(human ~ y2, dm)", summary(gm)$coefficients)
mh <- svymean(~human, dm)
show("mu284 svymean(~human, dm)", mh)
out$mu284_calibrated <- list(
  data = c("mu <- mu284",
           "mu$y2 <- mu$y1 + 3 * (mu$id2 - 2) - (mu$id1 %% 5)",
           "mu$labelled <- mu$id1 <= median(unique(mu$id1))",
           "mu$human <- ifelse(mu$labelled, mu$y1, NA)"),
  y2 = mu$y2, labelled_id1 = sort(unique(mu$id1[mu$labelled])),
  design = "dm <- twophase(id = list(~id1, ~id1), subset = ~labelled, data = mu)",
  calibration = "dmc <- calibrate(dm, phase = 2, formula = ~y2, calfun = \"linear\")",
  greg_mean = stat("svymean(~human, dmc)", m),
  greg_regression = coefs("coef(svyglm(human ~ y2, dm))", gm),
  human_only = stat("svymean(~human, dm)", mh)
)
# The same with phase 1 sampled without replacement from the 50 clusters (fpc n1), as the
# help page's example does.
dmf <- twophase(id = list(~id1, ~id1), fpc = list(~n1, NULL), subset = ~labelled, data = mu)
m <- svymean(~human, calibrate(dmf, phase = 2, formula = ~y2, calfun = "linear"))
show("mu284 fpc n1: svymean(~human, calibrate(dmf, ...))", m)
out$mu284_calibrated$greg_mean_phase1_fpc <- stat(paste(
  "svymean(~human, calibrate(twophase(id = list(~id1, ~id1), fpc = list(~n1, NULL),",
  "subset = ~labelled, data = mu), phase = 2, formula = ~y2, calfun = \"linear\"))"), m)

# And with phase-1 probabilities (1e-12, see design A above) instead of no fpc.
mu$p1 <- 1e-12
dmp <- twophase(id = list(~id1, ~id1), probs = list(~p1, NULL), subset = ~labelled, data = mu)
m <- svymean(~human, calibrate(dmp, phase = 2, formula = ~y2, calfun = "linear"))
show("mu284 phase-1 probs: svymean(~human, calibrate(dmp, ...))", m)
show("phases", attr(vcov(m), "phases"))
out$mu284_calibrated$greg_mean_phase1_probs <- stat(paste(
  "svymean(~human, calibrate(twophase(id = list(~id1, ~id1), probs = list(~p1, NULL),",
  "subset = ~labelled, data = mu), phase = 2, formula = ~y2, calfun = \"linear\"))",
  "with mu$p1 = 1e-12"), m)

# jsonlite's digits = NA keeps only 15 significant digits; every number is written instead
# with 17 (sprintf "%.17g", which round-trips a double) as verbatim JSON.
full <- function(x) {
  v <- sprintf("%.17g", x)
  structure(if (length(x) == 1) v else paste0("[", paste(v, collapse = ", "), "]"),
            class = "json")
}
write(toJSON(rapply(out, full, classes = c("numeric", "integer"), how = "replace"),
             auto_unbox = TRUE, json_verbatim = TRUE, pretty = TRUE),
      "tests/reference/judged_survey.json")
cat("\nwrote tests/reference/judged_survey.json\n")
