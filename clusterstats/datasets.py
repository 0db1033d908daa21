"""Real per-item evaluation results shipped with clusterstats.

Seven datasets of published, per-item evaluation results, each clustered in a way that
matters for its error bars: five of LLM benchmark results, and two (``hanna``,
``topicalchat``) of an automatic judge and humans scoring the same items. They are stored
in the package as xz-compressed CSV (read by pandas through Python's standard library) and
loaded as DataFrames::

    import clusterstats
    clusterstats.datasets.list()              # ['bbh', 'cruxeval', 'hanna', 'mmlu_pro', ...]
    mmlu = clusterstats.datasets.load("mmlu_pro")
    clusterstats.datasets.info("mmlu_pro")    # source, licence, columns

No row is simulated, imputed or re-generated. The licence of each dataset is the licence of
the repository its authors published it in; the texts and a provenance note (source commits,
the exact reshaping, checksums) are in ``clusterstats/data/``.
"""

from __future__ import annotations

import builtins
import difflib
from dataclasses import dataclass
from importlib import resources

import pandas as pd

from clusterstats import _display as fmt
from clusterstats.errors import InvalidInputError, InvalidOptionError

__all__ = ["DatasetInfo", "info", "list", "load", "load_demo_data"]


@dataclass(frozen=True, kw_only=True, repr=False)
class DatasetInfo:
    """What a bundled dataset holds, where it comes from, and under which licence.

    Attributes
    ----------
    name : str
        The name ``load`` takes.
    title : str
        One line saying what the rows are.
    n_rows : int
        Rows of the DataFrame ``load`` returns.
    clusters : str
        The clustering that matters for the dataset's error bars.
    columns : tuple of (name, dtype, meaning)
        Every column, in order, with the dtype ``load`` gives it (``dtypes`` maps each name
        to it).
    source : str
        The upstream repository and files the rows were reshaped from.
    licence : str
        SPDX identifier of the upstream licence.
    licence_file : str
        The licence text's file name in ``clusterstats/data``.
    citation : str
        The publication the results belong to.
    file : str
        The compressed CSV in ``clusterstats/data``.
    sha256 : str
        SHA-256 of the decompressed CSV, which is the build script's output byte for byte.
    """

    name: str
    title: str
    n_rows: int
    clusters: str
    columns: tuple[tuple[str, str, str], ...]
    source: str
    licence: str
    licence_file: str
    citation: str
    file: str
    sha256: str

    @property
    def dtypes(self) -> dict[str, str]:
        """The dtype ``load`` gives each column (``"string"`` is pandas' default)."""
        return {name: dtype for name, dtype, _ in self.columns}

    def __repr__(self) -> str:
        width = max(len(name) for name, _, _ in self.columns)
        lines = [
            f"DatasetInfo({self.name}: {self.title})",
            f"  {fmt.count(self.n_rows, 'row')}; clusters: {self.clusters}",
            f"  source: {self.source}",
            f"  licence: {self.licence} (clusterstats/data/{self.licence_file}); "
            f"cite: {self.citation}",
            "  columns:",
        ]
        lines += [
            f"    {name:<{width}}  {dtype:<7}  {meaning}" for name, dtype, meaning in self.columns
        ]
        return "\n".join(lines)


_STRING = "string"
_FLOAT = "float64"

_DATASETS: dict[str, DatasetInfo] = {
    "mmlu_pro": DatasetInfo(
        name="mmlu_pro",
        title="MMLU-Pro, 4 LLMs x 12,032 questions (5-shot CoT), one row per model and question",
        n_rows=48_128,
        clusters="91 sources (src), nested in 14 categories",
        columns=(
            ("model", _STRING, "model name"),
            ("question_id", "int64", "MMLU-Pro test question id"),
            ("category", _STRING, "one of 14 categories (the coarse grouping, a stratum)"),
            ("src", _STRING, "one of 91 sources or sub-subjects, nested in category"),
            (
                "gold",
                _STRING,
                "gold answer letter, as stored in that model's file; missing "
                "where the question is absent",
            ),
            ("pred", _STRING, "answer letter extracted by the harness; missing if none"),
            (
                "correct",
                "Int64",
                "1 if pred equals gold, else 0; missing if the question is "
                "absent from the model's file (a missing pred counts as 0)",
            ),
            (
                "pred_missing",
                "int64",
                "1 if no answer letter was extracted or the question is absent, else 0",
            ),
            ("absent", "int64", "1 if the question is absent from the model's file, else 0"),
        ),
        source="github.com/TIGER-AI-Lab/MMLU-Pro, eval_results/model_outputs_*_5shots.zip "
        "(commit 964a136e)",
        licence="Apache-2.0",
        licence_file="LICENSE-MMLU-Pro.txt",
        citation="Wang et al. (2024), MMLU-Pro: A More Robust and Challenging Multi-Task "
        "Language Understanding Benchmark, NeurIPS Datasets and Benchmarks",
        file="mmlu_pro.csv.xz",
        sha256="a33d7dc3fae3b48fefbca703fdd54450822589fd29b34471b5971894f2599f51",
    ),
    "bbh": DatasetInfo(
        name="bbh",
        title="BIG-Bench Hard, code-davinci-002 with chain-of-thought and with direct "
        "answers on the same 6,511 questions (paired)",
        n_rows=13_022,
        clusters="27 tasks",
        columns=(
            ("model", _STRING, "code-davinci-002"),
            ("condition", _STRING, "cot (chain-of-thought) or direct (answer only)"),
            ("task", _STRING, "one of 27 tasks: the cluster"),
            ("item_id", _STRING, "<task>-<index>: the item key shared by both conditions"),
            ("item_index", "int64", "0-based position in the task file"),
            ("correct", "int64", "1 if the final answer equals the target, else 0"),
            ("no_answer", "int64", "1 if no final answer could be extracted (cot only)"),
        ),
        source="github.com/suzgunmirac/BIG-Bench-Hard, code-davinci-002-outputs/ (commit 9ee07bd4)",
        licence="MIT",
        licence_file="LICENSE-BIG-Bench-Hard.txt",
        citation="Suzgun et al. (2023), Challenging BIG-Bench Tasks and Whether "
        "Chain-of-Thought Can Solve Them, Findings of ACL",
        file="bbh.csv.xz",
        sha256="bce4d020236ce75644916bfb5fbf517f39e1f6e1c6e3d1bb64d3f47239fa5c46",
    ),
    "cruxeval": DatasetInfo(
        name="cruxeval",
        title="CRUXEval, Code Llama 7B (T=0.2): 800 problems x 10 samples, for input and "
        "for output prediction",
        n_rows=16_000,
        clusters="800 problems (problem_id), 10 reruns each, per task",
        columns=(
            ("model", _STRING, "codellama-7b"),
            ("task", _STRING, "input_prediction (CRUXEval-I) or output_prediction (-O)"),
            ("problem_id", _STRING, "sample_0 ... sample_799: the case"),
            ("sample_index", "int64", "0-9: the rerun"),
            ("correct", "int64", "1 if the sample passed when executed, else 0"),
        ),
        source="github.com/facebookresearch/cruxeval, samples/evaluation_results/"
        "sample_scored_codellama-7b_temp0.2_{input,output}.json (commit 10d71b4c)",
        licence="MIT",
        licence_file="LICENSE-CRUXEval.txt",
        citation="Gu et al. (2024), CRUXEval: A Benchmark for Code Reasoning, Understanding "
        "and Execution, ICML",
        file="cruxeval.csv.xz",
        sha256="4288bb8e86859f93777021d773d7e231fa061f2a7c0ddb151294f788d59ab7ee",
    ),
    "tau_bench_airline": DatasetInfo(
        name="tau_bench_airline",
        title="tau-bench airline, gpt-4o tool-calling agent: 50 tasks x 4 trials",
        n_rows=200,
        clusters="50 tasks (task_id, 4 reruns each), nested in 34 simulated users",
        columns=(
            ("model", _STRING, "gpt-4o"),
            ("domain", _STRING, "airline"),
            ("task_id", "int64", "0-49: the case"),
            ("user_id", _STRING, "one of 34 simulated customers; tasks share customers"),
            ("trial", "int64", "0-3: the rerun"),
            ("reward", "int64", "1 if the episode reached the goal state, else 0"),
            ("hit_step_limit", "int64", "1 if the agent ran out of its 30 steps (reward 0)"),
            ("n_gt_actions", "int64", "length of the ground-truth action list"),
            ("n_messages", "int64", "messages in the logged trajectory"),
        ),
        source="github.com/sierra-research/tau-bench, historical_trajectories/"
        "gpt-4o-airline.json (commit 7362a170)",
        licence="MIT",
        licence_file="LICENSE-tau-bench.txt",
        citation="Yao et al. (2024), tau-bench: A Benchmark for Tool-Agent-User Interaction "
        "in Real-World Domains, arXiv:2406.12045",
        file="tau_bench_airline.csv.xz",
        sha256="d0a41d75583a39dfb168b18ba12e05411c0c1e8716f5b0aa574536912154a34a",
    ),
    "repoqa_snf": DatasetInfo(
        name="repoqa_snf",
        title="RepoQA Search Needle Function leaderboard, 30 LLMs x the same 500 needle "
        "functions (16k-token code contexts), one row per system and needle",
        n_rows=15_000,
        clusters="50 repositories (repo, 10 needles each), nested in 5 languages of 100",
        columns=(
            ("system", _STRING, "model name as in the source (Hugging Face id or API name)"),
            ("instance_id", _STRING, "<repo>::<function>: one of 500 needles, the item"),
            ("language", _STRING, "python, cpp, java, typescript or rust (100 needles each)"),
            ("repo", _STRING, "one of 50 GitHub repositories (10 needles each): the cluster"),
            (
                "needle_position",
                "float64",
                "depth of the needle in the context, 0.05 ... 0.95 (one per repo each)",
            ),
            (
                "is_best_similar",
                "int64",
                "1 if the output is more similar to the needle than to any other function",
            ),
            (
                "best_similar_score",
                "float64",
                "that best similarity (BLEU-based, 0-1), exactly as stored",
            ),
            (
                "correct",
                "int64",
                "the leaderboard's pass: 1 if is_best_similar and best_similar_score >= 0.8",
            ),
            ("eval_date", _STRING, "date of the system's run, YYYY-MM-DD"),
            ("claimed_ctx", _STRING, "claimed context window shown on the leaderboard (8k-1000k)"),
            ("open_weights", "int64", "1 for a Hugging Face id (22 systems), 0 for an API model"),
            (
                "leaderboard_pass1",
                "float64",
                "the system's published pass@1 at 0.8 over the 500 needles",
            ),
            (
                "matches_leaderboard",
                "int64",
                "1 if the rows reproduce the published figures (29 systems); 0 for "
                "Qwen/Qwen1.5-72B-Chat, an earlier run (0.500) than its published 0.670",
            ),
        ),
        source="github.com/evalplus/evalplus.github.io, results/repoqa/ntoken_16384/"
        "*-SCORES.json (commit f088873b) and results/repoqa/COMBINED-RESULTS.json "
        "(commit 87418456)",
        licence="Apache-2.0",
        licence_file="LICENSE-RepoQA.txt",
        citation="Liu et al. (2024), RepoQA: Evaluating Long Context Code Understanding, "
        "arXiv:2406.06025 (data: the EvalPlus team)",
        file="repoqa_snf.csv.xz",
        sha256="de50ed99ed565f1265a22268e40c7a5c3562b3d566d0c9c9244311d6f8043a33",
    ),
    "hanna": DatasetInfo(
        name="hanna",
        title="HANNA, an LLM judge and three humans rating the same 1,056 stories (11 "
        "generators x 96 writing prompts) on 6 criteria, one row per story and criterion",
        n_rows=6_336,
        clusters="cluster = writing prompt (96); the generating system is a second, strong "
        "clustering",
        columns=(
            ("cluster", "int64", "0-95: the WritingPrompts prompt the story answers"),
            ("item", "int64", "HANNA story id, 96 x the system's index + cluster (1,056 stories)"),
            (
                "system",
                _STRING,
                "one of 11 story sources (Human and 10 generators), 96 stories each",
            ),
            (
                "criterion",
                _STRING,
                "Relevance, Coherence, Empathy, Surprise, Engagement or Complexity",
            ),
            ("human_score", _FLOAT, "mean of human_1..3, 1-5 (6 significant digits)"),
            ("human_1", _FLOAT, "a human rating, 1-5 (by position in the source, not a rater)"),
            ("human_2", _FLOAT, "a second human rating, 1-5"),
            ("human_3", _FLOAT, "a third human rating, 1-5"),
            ("judge_score", _FLOAT, "ChatGPT's rating, evaluation prompt 1, mean of 3 tries, 1-5"),
            ("judge_beluga13b", _FLOAT, "Beluga-13B's rating, the same protocol, 1-5"),
            ("judge_mistral7b", _FLOAT, "Mistral-7B's rating, the same protocol, 1-5"),
            ("judge_llama13b", _FLOAT, "Llama-13B's rating, the same protocol, 1-5"),
            ("judge_orcaplatypus13b", _FLOAT, "OrcaPlatypus-13B's rating, the same protocol, 1-5"),
            (
                "bertscore_f1",
                _FLOAT,
                "BERTScore F1 against the human story of the prompt (1 for Human): one per "
                "story, the same for every criterion",
            ),
            ("bartscore_sh", _FLOAT, "BARTScore-SH, one per story like bertscore_f1"),
        ),
        source="github.com/dig-team/hanna-benchmark-asg, hanna_metric_scores_llm.csv "
        "(commit 282f2753)",
        licence="MIT",
        licence_file="LICENSE-HANNA.txt",
        citation="Chhun, Suchanek & Clavel (2024), Do Language Models Enjoy Their Own "
        "Stories? Prompting Large Language Models for Automatic Story Evaluation, TACL 12; "
        "HANNA: Chhun et al. (2022), COLING",
        file="hanna.csv.xz",
        sha256="afbe5e7f9f3849061919f08689becb1774d6436a2aa2384957f3019fd061e7d8",
    ),
    "topicalchat": DatasetInfo(
        name="topicalchat",
        title="Topical-Chat (USR), the UniEval judge and human ratings of the same 360 "
        "responses (6 systems x 60 dialogue contexts) on 4 criteria, one row per response "
        "and criterion",
        n_rows=1_440,
        clusters="cluster = dialogue context (60, one response of each of 6 systems)",
        columns=(
            ("cluster", "int64", "0-59: the dialogue context the response continues"),
            ("item", "int64", "0-359: the response, in the source file's order"),
            (
                "system",
                _STRING,
                "one of 6 response sources (2 human, 4 decodings of one model)",
            ),
            (
                "criterion",
                _STRING,
                "naturalness, coherence, engagingness or groundedness",
            ),
            (
                "human_score",
                _FLOAT,
                "USR's mean of 3 annotators: 1-3, groundedness 0-1 (6 significant digits)",
            ),
            (
                "judge_score",
                _FLOAT,
                "UniEval's score, 0-1; engagingness sums over sentences (0 up)",
            ),
            (
                "human_overall",
                _FLOAT,
                "USR's overall rating of the response, 1-5: the same for every criterion",
            ),
        ),
        source="github.com/maszhongming/UniEval, reproduce/unieval_predict/dialogue/"
        "topical_chat_result.json (commit d33e7b6c)",
        licence="MIT",
        licence_file="LICENSE-UniEval.txt",
        citation="Zhong et al. (2022), Towards a Unified Multi-Dimensional Evaluator for Text "
        "Generation, EMNLP (UniEval); ratings: Mehri & Eskenazi (2020), USR, ACL",
        file="topicalchat.csv.xz",
        sha256="c5c478e39bb5950eaa620487c6a86b4891b9acb0ed9e74a42efe8b8e6e9a3818",
    ),
}


def list() -> builtins.list[str]:
    """The names of the bundled datasets, in alphabetical order.

    Examples
    --------
    >>> import clusterstats
    >>> clusterstats.datasets.list()
    ['bbh', 'cruxeval', 'hanna', 'mmlu_pro', 'repoqa_snf', 'tau_bench_airline', 'topicalchat']
    """
    return sorted(_DATASETS)


def info(name: str) -> DatasetInfo:
    """Source, licence, size and columns of a bundled dataset.

    Parameters
    ----------
    name : str
        One of ``list()``.

    Returns
    -------
    DatasetInfo

    Raises
    ------
    InvalidOptionError
        An unknown name; the message lists the names (and the closest one, for a typo).
    InvalidInputError
        A name that is not a string.

    Examples
    --------
    >>> import clusterstats
    >>> about = clusterstats.datasets.info("tau_bench_airline")
    >>> about.n_rows, about.licence, about.dtypes["reward"]
    (200, 'MIT', 'int64')
    """
    if not isinstance(name, str):
        raise InvalidInputError(
            f"name must be the name of a bundled dataset (a str), got {name!r} (of type "
            f"{type(name).__name__}); the datasets are {', '.join(list())}"
        )
    if name not in _DATASETS:
        close = difflib.get_close_matches(name.strip().lower(), list(), n=1, cutoff=0.5)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise InvalidOptionError(
            f"no bundled dataset {name!r}; the datasets are {', '.join(list())}{hint}"
        )
    return _DATASETS[name]


def load(name: str) -> pd.DataFrame:
    """Load a bundled dataset as a new DataFrame.

    Seven real datasets of published per-item results ship with the package
    (xz-compressed CSV, about 360 kB in all), each with its licence and provenance in
    ``clusterstats/data/``. From a shell, ``clusterstats datasets NAME --to FILE`` writes
    one to a file.

    Parameters
    ----------
    name : str
        ``"mmlu_pro"``: 48,128 rows, MMLU-Pro, 4 models x 12,032 questions with the missing
        answers (``pred_missing``, ``absent``), in 91 ``src`` nested in 14 ``category``
        (Apache-2.0). ``"bbh"``: 13,022 rows, BIG-Bench Hard, code-davinci-002 with
        chain-of-thought and direct answers on the same 6,511 questions in 27 ``task``
        (MIT). ``"cruxeval"``: 16,000 rows, CRUXEval, Code Llama 7B, 800 ``problem_id`` x 10
        samples, input and output prediction (MIT). ``"tau_bench_airline"``: 200 rows,
        τ-bench airline, gpt-4o agent, 50 ``task_id`` x 4 trials in 34 ``user_id`` (MIT).
        ``"repoqa_snf"``: 15,000 rows, the RepoQA Search Needle Function leaderboard, 30
        systems x the same 500 ``instance_id`` in 50 ``repo`` of 10 nested in 5
        ``language``; ``correct`` is the leaderboard's pass (``is_best_similar`` and
        ``best_similar_score >= 0.8``), and ``matches_leaderboard`` is 0 for
        ``Qwen/Qwen1.5-72B-Chat``, whose rows are an earlier run than its published figure
        (Apache-2.0, the EvalPlus team). ``"hanna"``: 6,336 rows, HANNA, 1,056 stories (11
        ``system`` x 96 writing prompts, the ``cluster``) on 6 ``criterion``, each with
        three human ratings, their mean ``human_score``, ChatGPT's ``judge_score``, four
        open LLM judges and two story-level metrics (MIT). ``"topicalchat"``: 1,440 rows,
        Topical-Chat, 360 responses (6 ``system`` x 60 dialogue contexts, the ``cluster``)
        on 4 ``criterion``, USR's human ``human_score`` and UniEval's ``judge_score`` (MIT).
        ``info`` gives each one's columns, dtypes, source and licence.

    Returns
    -------
    pandas.DataFrame
        The rows in the order the build script wrote them; text columns have pandas'
        default string dtype, ``mmlu_pro``'s ``correct`` is a nullable ``Int64`` (missing
        where a question is absent from a model's file), ``repoqa_snf``'s scores, depths and
        published figures and the ratings and scores of ``hanna`` and ``topicalchat`` are
        ``float64`` (the CSV's digits exactly), every other column is ``int64``.

    Raises
    ------
    InvalidOptionError
        An unknown name; the message lists the names (and the closest one, for a typo).
    InvalidInputError
        A name that is not a string.

    Examples
    --------
    >>> import clusterstats
    >>> mmlu = clusterstats.datasets.load("mmlu_pro")
    >>> mmlu.shape, mmlu["src"].nunique(), int(mmlu["correct"].isna().sum())
    ((48128, 9), 91, 20)
    """
    about = info(name)
    dtypes = {
        column: dtype for column, dtype in about.dtypes.items() if dtype not in (_STRING, _FLOAT)
    }
    # Python's float() rounds correctly, so each number is the CSV's digits exactly; pandas
    # 2.x's own parser is off by one unit in the last place for a third of repoqa_snf's scores
    floats = {column: float for column, dtype in about.dtypes.items() if dtype == _FLOAT}
    source = resources.files("clusterstats") / "data" / about.file
    with resources.as_file(source) as path:
        return pd.read_csv(path, dtype=dtypes, converters=floats, compression="xz")


def load_demo_data() -> pd.DataFrame:
    """The MMLU-Pro results of four LLMs on all 12,032 questions in 91 sources, as the demo,
    the README and the examples use them.

    One row per (model, question): 48,128 rows with columns ``model``, ``question_id``,
    ``category``, ``src`` and ``correct`` (a nullable 0/1 integer, missing where a question
    is absent from a model's file). The 91 ``src`` clusters (sub-subjects or sources,
    nested in 14 ``category`` values) hold 17 to 1,003 questions: as uneven as real
    benchmarks are, which is what makes the honest interval wider than a slice of equal
    sources would suggest. It is ``load("mmlu_pro")`` with those columns (Apache-2.0; the
    licence and provenance are in ``clusterstats/data/PROVENANCE.md``).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import clusterstats
    >>> df = clusterstats.load_demo_data()
    >>> df.shape, df["src"].nunique(), sorted(df["model"].unique())[0]
    ((48128, 5), 91, 'Meta-Llama-3.1-70B-Instruct')
    """
    demo = load("mmlu_pro").loc[:, _DEMO_COLUMNS]
    return demo.sort_values(["model", "question_id"], kind="stable").reset_index(drop=True)


_DEMO_COLUMNS = ["model", "question_id", "category", "src", "correct"]
