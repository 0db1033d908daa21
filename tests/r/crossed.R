# Reference values for crossed (two- and three-way) clustering of a mean: R sandwich's
# vcovCL with several cluster variables and multi0 = FALSE (Cameron, Gelbach & Miller 2011:
# V_a + V_b - V_ab, each with its own G/(G-1)), on an intercept-only regression, whose
# coefficient is the mean. Run from the repository root (the test suite does not need R):
#   Rscript tests/r/crossed.R
# Produced with R 4.2.2, sandwich 3.0.2, lme4 (Debian r-cran-sandwich, r-cran-lme4). It
# writes the data it uses to tests/reference/data/ and prints "key value" lines, kept beside
# the tests in tests/stats/test_crossed.py.
suppressMessages({library(sandwich)})
options(digits = 17)
p <- function(key, ...) cat(key, sprintf("%.17g", c(...)), "\n")
se <- function(fit, cluster, type = "HC1") sqrt(vcovCL(fit, cluster = cluster, type = type, multi0 = FALSE)[1, 1])

# lme4's VerbAgg (De Boeck & Wilson 2004): 316 persons x 24 items, y = 1 for a "yes".
data(VerbAgg, package = "lme4")
verb <- data.frame(id = as.integer(VerbAgg$id), item = as.integer(VerbAgg$item),
                   y = as.numeric(VerbAgg$r2 == "Y"))
write.csv(verb, xzfile("tests/reference/data/verbagg.csv.xz"), row.names = FALSE)
fit <- lm(y ~ 1, data = verb)
p("verbagg.mean", coef(fit))
p("verbagg.se.id+item", se(fit, ~ id + item))
p("verbagg.se.id", se(fit, ~ id))
p("verbagg.se.item", se(fit, ~ item))

# sandwich's PetersenCL (Petersen 2009): 500 firms x 10 years, the same data as
# statsmodels' stats/tests/test_data.txt.
data(PetersenCL, package = "sandwich")
fit <- lm(y ~ 1, data = PetersenCL)
p("petersen.mean", coef(fit))
p("petersen.se.firm+year", se(fit, ~ firm + year))

# Three crossed groupings (a simulated question x template x judge eval, written out):
# the inclusion-exclusion over the seven sets of groupings.
set.seed(20261201)
three <- expand.grid(question = 1:40, template = 1:6, judge = 1:4)
three <- three[sample(nrow(three), 700), ]
u <- rnorm(40, 0, 0.8)[three$question] + rnorm(6, 0, 0.5)[three$template] + rnorm(4, 0, 0.4)[three$judge]
three$y <- as.numeric(runif(nrow(three)) < plogis(u))
write.csv(three, xzfile("tests/reference/data/three_way.csv.xz"), row.names = FALSE)
fit <- lm(y ~ 1, data = three)
p("three.mean", coef(fit))
p("three.se.question+template+judge", se(fit, ~ question + template + judge))
p("three.se.question+template", se(fit, ~ question + template))
