#!/usr/bin/env bash
# Smoke test of a plain install: every CLI verb and every option that README.md and
# docs/guide.md advertise, run once on the toy collection shipped inside the package.
#
#     scripts/smoke_install.sh [PYTHON]
#
# PYTHON (default: python3) is the interpreter of an environment where only
# `pip install .` was run (no extras). The `irscale` console script is taken from that
# environment's scripts directory, the toy collection from the installed package (so the
# package data is checked too), and everything is written to a temporary directory,
# with a fresh rank-map cache (IRSCALE_CACHE_DIR) so that the engines really build.
#
# A command fails the smoke test when it exits non-zero or prints a Python traceback.
# Options that belong to an extra (--scheduler: irscale[parallel], Parquet input:
# irscale[parquet]) must, where the extra is absent, be refused with one `error:` line
# naming the `pip install` to type, exit 2 and no traceback; where it is installed they
# must work. All steps run; the failures are listed at the end and the exit status is 1
# if there was any. About two minutes of CPU time (80 steps, one process each; most of it
# is Python's start-up and imports).
set -euo pipefail

PY=${1:-python3}
PY=$(command -v "$PY")
BIN=$("$PY" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
IRSCALE="$BIN/irscale"
[ -x "$IRSCALE" ] || IRSCALE=$(command -v irscale) || { echo "smoke: no irscale console script in $BIN or on PATH" >&2; exit 1; }
TOY=$("$PY" -c 'import irscale, pathlib; print(pathlib.Path(irscale.__file__).parent / "examples" / "toy")')
[ -f "$TOY/qrels.txt" ] && [ -d "$TOY/runs" ] || { echo "smoke: the installed package lacks its toy collection ($TOY)" >&2; exit 1; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/irscale-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export IRSCALE_CACHE_DIR="$WORK/cache"
export PYTHONPATH="$WORK/py"  # the user measure of `inspect module:function`, nothing else
mkdir -p "$WORK/log" "$WORK/py"
cd "$WORK"
Q="$TOY/qrels.txt"
R="$TOY/runs"
echo "smoke: python $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])')), irscale $IRSCALE, toy $TOY, in $WORK"

STEP=0
FAILED=()
START=$SECONDS
LAST_OUT=""
LAST_ERR=""
LAST_OK=1  # whether the last step passed (has/out_has check only the outputs of a step that did)

_show() {  # the command, as one can paste it
    local s="" a
    for a in "$@"; do s+=" $(printf '%q' "$a")"; done
    echo "${s# }"
}

_fail() {  # description, reason
    FAILED+=("$1: $2")
    echo "FAIL  $1: $2" >&2
    [ -s "$LAST_ERR" ] && tail -n 15 "$LAST_ERR" | sed 's/^/      | /' >&2
    return 0
}

_traceback() { grep -l "Traceback (most recent call last)" "$LAST_OUT" "$LAST_ERR" >/dev/null 2>&1; }

# ok COMMAND...: must exit 0 without a traceback. (Returns 0 either way, so that every
# step runs under set -e; a failure is recorded in FAILED.)
ok() {
    STEP=$((STEP + 1))
    LAST_OUT="$WORK/log/$STEP.out" LAST_ERR="$WORK/log/$STEP.err" LAST_OK=0
    local what t0=$SECONDS rc=0
    what=$(_show "$@")
    "$@" >"$LAST_OUT" 2>"$LAST_ERR" </dev/null || rc=$?
    if [ "$rc" -ne 0 ]; then
        _fail "$what" "exit status $rc"
    elif _traceback; then
        _fail "$what" "printed a traceback"
    else
        LAST_OK=1
        echo "ok    $what ($((SECONDS - t0)) s)"
    fi
}

# refused ADVICE COMMAND...: must exit 2 with one `error:` line holding ADVICE, no traceback.
refused() {
    local advice=$1 rc=0 what t0=$SECONDS
    shift
    STEP=$((STEP + 1))
    LAST_OUT="$WORK/log/$STEP.out" LAST_ERR="$WORK/log/$STEP.err" LAST_OK=0
    what=$(_show "$@")
    "$@" >"$LAST_OUT" 2>"$LAST_ERR" </dev/null || rc=$?
    if _traceback; then
        _fail "$what" "printed a traceback instead of one error line"
    elif [ "$rc" -ne 2 ]; then
        _fail "$what" "exit status $rc, expected 2 (refused)"
    elif [ "$(grep -c '^error:' "$LAST_ERR")" -ne 1 ] || ! grep -qF -- "$advice" "$LAST_ERR"; then
        _fail "$what" "expected one error line naming '$advice'"
    else
        LAST_OK=1
        echo "ok    $what (refused: $(grep '^error:' "$LAST_ERR" | cut -c1-110)) ($((SECONDS - t0)) s)"
    fi
}

# has FILE...: each file exists and is not empty (checks the outputs of the last step).
has() {
    local f
    [ "$LAST_OK" -eq 1 ] || return 0
    for f in "$@"; do
        [ -s "$f" ] || _fail "output of step $STEP" "$f is missing or empty"
    done
}

# out_has TEXT: the last step's stdout contains TEXT.
out_has() { [ "$LAST_OK" -eq 0 ] || grep -qF -- "$1" "$LAST_OUT" || _fail "output of step $STEP" "stdout lacks '$1'"; }

has_module() { "$PY" -c "import $1" >/dev/null 2>&1; }

# Inputs derived from the toy collection: gzip, a glob, several tags in one file, a
# directory with a README, a 7-field run.
mkdir -p gz mixed junk
gzip -c "$R/bm25.txt" >gz/bm25.txt.gz
gzip -c "$R/random.txt" >gz/random.txt
cat "$R"/*.txt >mixed/all-runs.txt
cp "$R"/*.txt junk/ && echo "these are the toy runs" >junk/README
awk '{print $0, "extra"}' "$R/bm25.txt" >extra.txt
cat >"$WORK/py/usermeasure.py" <<'EOF'
import numpy as np


def hits(runs, c):
    """Number of relevant documents: a user measure f(runs, c) -> values."""
    return (np.asarray(runs) > 0).sum(axis=1).astype(float)
EOF

echo "--- version, measures, demo, python -m irscale"
ok "$IRSCALE" --help
ok "$IRSCALE" version
ok "$IRSCALE" --version
ok "$IRSCALE" --no-warnings evaluate "$Q" "$R" -m AP
ok "$PY" -m irscale version
ok "$IRSCALE" measures
out_has "RBP"
ok "$IRSCALE" demo
for f in tsv csv json; do ok "$IRSCALE" demo --format "$f"; done

echo "--- evaluate"
ok "$IRSCALE" evaluate "$Q" "$R" -m AP -m nDCG@10 -m "RBP(p=0.8)@30"
ok "$IRSCALE" evaluate "$Q" gz/bm25.txt.gz gz/random.txt -q --format tsv  # gzip found from the content
out_has "nDCG@10"
for f in tsv csv json; do
    ok "$IRSCALE" evaluate "$Q" "$R" -q -m AP -m P@10 -f "$f"
    cp "$LAST_OUT" "eval.$f"
done
ok "$PY" -c 'import json, sys; json.load(open(sys.argv[1]))' eval.json
ok "$PY" -c 'import pandas as pd, sys; assert len(pd.read_csv(sys.argv[1])) > 0; assert len(pd.read_csv(sys.argv[2], sep="\t")) > 0' eval.csv eval.tsv
ok "$IRSCALE" evaluate "$Q" "$R/*.txt" --trec-eval -q -m map -m P_10
out_has "P_10"
ok "$IRSCALE" evaluate "$Q" "$R" --trec-eval -l 2 -m map -m recip_rank -m P.10 -m recall.100 -m "ndcg_cut.10,20" -m "P_10(rel=2)"
out_has "ndcg_cut_20"
out_has "all"
ok "$IRSCALE" evaluate "$Q" mixed/all-runs.txt --split-tags --max-grade 3 --trec-eval \
    -m map -m num_rel_ret -m ndcg_cut_10 -m recip_rank
refused "--split-tags" "$IRSCALE" evaluate "$Q" mixed/all-runs.txt
ok "$IRSCALE" evaluate "$Q" junk --skip-invalid
# a stray decimal grade: announced (real values), or read as trec_eval reads it with --integer-grades
sed '1s/ [0-9]*$/ 1.5/' "$Q" >stray-grade-qrels.txt
ok "$IRSCALE" evaluate stray-grade-qrels.txt "$R" -m nDCG@10
grep -qF "stray-grade-qrels.txt, line 1: grade 1.5 is not a whole number" "$LAST_ERR" || _fail "output of step $STEP" "no real-grade line"
ok "$IRSCALE" evaluate stray-grade-qrels.txt "$R" -m nDCG@10 --integer-grades
grep -qF "whole number" "$LAST_ERR" && _fail "output of step $STEP" "--integer-grades still announced real grades"
ok "$IRSCALE" transform stray-grade-qrels.txt "$R" -m P -N 5 --integer-grades
ok "$IRSCALE" compare stray-grade-qrels.txt "$R" -m P -N 5 -t sign --no-figures --integer-grades
refused "--skip-invalid" "$IRSCALE" evaluate "$Q" junk
# incomplete judgments: judged only (trec_eval -J) on every verb that reads runs, RBP's residual
ok "$IRSCALE" evaluate "$Q" "$R" -J -m AP -m "rbp_resid(p=0.8)@10" --trec-eval
ok "$IRSCALE" transform "$Q" "$R" -m "RBP(p=0.8)" -m AP -N 10 --judged-only --residuals
grep -qF "residual end" "$LAST_OUT" || _fail "output of step $STEP" "no column at the residual's end"
refused "no measure asked is RBP" "$IRSCALE" transform "$Q" "$R" -m AP -N 10 --residuals
ok "$IRSCALE" compare "$Q" "$R" -m P -m "RBP(p=0.8)" -N 5 -t sign --no-figures -J --out study-judged
grep -qF "condensed runs" study-judged/report_N5.md || _fail "output of step $STEP" "the report does not say the protocol"
ok "$IRSCALE" evaluate "$Q" extra.txt --ignore-extra-fields
ok "$IRSCALE" evaluate "$Q" "$R" -M 5 --float32-scores --duplicates first --missing-topics drop
refused "--missing-topics" "$IRSCALE" evaluate "$Q" "$R" --missing-topics error
ok "$IRSCALE" evaluate "$Q" "$R" -m "nDCG(gains=exp)@10" -m "nDCG(gains=0:0,1:1,2:3)@10" -m "RBP(p=1/3)@10" \
    -m "DCG(base=2)@10" -m "ERR@10" -m gP@10 -m gR@10 -m SBTO@10 -m RBTO@10 -m "P(rel=2)@10" -m bpref -m Rprec \
    -m R@10 -m F@10 -m Success@10 -m NumRet -m NumRel -m NumRelRet -m ap -m MAP -m P_10
refused "AP" "$IRSCALE" evaluate "$Q" "$R" -m APx
# real-valued grades (an LLM judge's 0.5, 1.7): a threshold, graded gains, the interval scale on the grades present
sed -e 's/ 1$/ 0.5/' -e 's/ 2$/ 1.7/' "$Q" > real-qrels.txt
ok "$IRSCALE" evaluate real-qrels.txt "$R" -l 0.5 -m P@10 -m "AP(rel=1/3)" -m nDCG@10 -m "RBP(p=0.8)" -m gP@10
out_has "P(rel=0.5)@10"
ok "$IRSCALE" transform real-qrels.txt "$R" -m nDCG -m "P(rel=0.5)" -N 5 -f tsv
out_has "ranked(nDCG@5)"
refused "rel=0.5" "$IRSCALE" evaluate real-qrels.txt "$R" -m ERR@10
refused "threshold" "$IRSCALE" transform real-qrels.txt "$R" -m P -N 5 --relevance lenient
# the engines' memory budget
ok "$IRSCALE" rankmap nDCG -N 10 --levels 4 --memory 5M --no-cache
out_has "count"
refused "the budget is 5 MiB" "$IRSCALE" rankmap nDCG -N 10 --levels 4 --memory 5M --engine dcg --no-cache
refused "--memory must be a size" "$IRSCALE" transform "$Q" "$R" -m AP -N 5 --memory lots

echo "--- transform"
ok "$IRSCALE" transform "$Q" "$R" -N 10
ok "$IRSCALE" transform "$Q" "$R" -m AP -m "RBP(p=0.8)" -m "nDCG(base=2)" -N 10 --normalize
ok "$IRSCALE" transform "$Q" "$R" -m AP -m RR -N 10 --ties unq --ties mid --ties min --ties max -q -f tsv
out_has "ranked("
ok "$IRSCALE" transform "$Q" "$R" -m AP -N 5 -f json
ok "$IRSCALE" transform "$Q" "$R" -m AP -N 5 --trec-eval
ok "$IRSCALE" transform "$Q" "$R" -m AP -m nDCG -m ERR -N 8 --relevance lenient
ok "$IRSCALE" transform "$Q" "$R" -m nDCG -m "RBP(p=0.8)" -m ERR -N 8 --relevance graded --max-grade 2 \
    --float32-scores --missing-topics drop --duplicates first
ok "$IRSCALE" transform "$Q" "$R" -m "RBP(p=0.8)" -m nDCG -N 20  # graded 3^20 runs: the count engine (numba)
ok "$IRSCALE" transform "$Q" "$R" -m AP -N 12 --max-pairs 100000000
ok "$IRSCALE" transform "$Q" "$R" -m P -m RR -m "RBP(p=0.8)" -m nDCG -N 100 --normalize --approx 1e-4
out_has "halfwidth("
ok "$IRSCALE" transform "$Q" "$R" -m nDCG -m P -N 100 --approx 1e-4  # approx normalises the columns it bounds
out_has "normalized, midpoint"
refused "--approx" "$IRSCALE" transform "$Q" "$R" -m nDCG -N 100 --normalize
# ir_metadata: transform writes run files with a header (PyYAML, a dependency); a malformed header
# is refused naming --metadata warn, which reads the run without it
ok "$IRSCALE" transform "$Q" "$R" -m AP -m P -N 10 --run-out ranked-runs
has "ranked-runs/ranked_AP@10.run" "ranked-runs/ranked_P@10.run"
grep -q "^# ir_metadata.start" "ranked-runs/ranked_AP@10.run" 2>/dev/null || _fail "output of step $STEP" "no ir_metadata header"
mkdir -p meta-runs && cp "$R"/*.txt meta-runs/
{ printf '# ir_metadata.start\n# tag: bm25\n# actor: [lab\n# ir_metadata.end\n'; cat "$R/bm25.txt"; } >meta-runs/bm25.txt
refused "--metadata warn" "$IRSCALE" evaluate "$Q" meta-runs -m AP
ok "$IRSCALE" evaluate "$Q" meta-runs -m AP --metadata warn

echo "--- rankmap"
ok "$IRSCALE" rankmap AP -N 10
ok "$IRSCALE" rankmap "RBP(p=0.8)" -N 12 --show 2
ok "$IRSCALE" rankmap P -N 30 --engine closed
ok "$IRSCALE" rankmap AP -N 10 --engine split --no-cache --max-pairs 100000000
ok "$IRSCALE" rankmap ERR -N 8 --engine enumerate
ok "$IRSCALE" rankmap nDCG -N 6 --levels 3 --engine dcg
ok "$IRSCALE" rankmap AP -N 6 --engine oracle --show 0

echo "--- compare"
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -m nDCG -o cmp
out_has "Sign Test"
has cmp/report_N5.html cmp/report_N5.md cmp/provenance_N5.yaml cmp/table2_tau_measure_vs_ranked_N5.csv \
    cmp/table2_tau_measure_vs_ranked_N5.json cmp/table2_tau_measure_vs_ranked_N5.tex \
    cmp/table4_tau_between_measures_N5.csv cmp/tables5_6_significance_changes_N5.csv \
    cmp/means_original_vs_ranked_N5.csv cmp/measure_free_pairs_N5.csv
for c in holm bonferroni bh; do
    ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -m RR --correction "$c" -o "corr-$c"
    has "corr-$c/tables5_6_significance_changes_N5.csv"
    [ "$LAST_OK" -eq 0 ] || grep -q sig_adjusted "corr-$c/tables5_6_significance_changes_N5.csv" ||
        _fail "compare --correction $c" "tables5_6_significance_changes_N5.csv lacks sig_adjusted"
done
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -m RR --correction holm --across-measures
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -b bm25 -b random --correction bh -o base
echo "--- table (the paper table from the written study)"
ok "$IRSCALE" table base -m AP --format latex
ok "$IRSCALE" table base -m AP -b bm25 --test sign --correction holm --format markdown
ok "$IRSCALE" table base --scale ranked --top 2 --by AP --format html -o base/table.html
ok "$IRSCALE" table cmp -m AP -m nDCG --systems bm25,random --format csv --decimals 4
has base/comparisons_with_baselines_N5.csv base/report_N5.html
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -m nDCG -t sign -t ttest -t friedman --alpha 0.1 --no-mid --no-effects \
    --no-measure-free --relevance lenient
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -m "RBP(p=0.8)" --spacing -o figs
has figs/report_N5.html figs/figure1_tau_original_N5.svg figs/figure1_tau_original_N5.pdf figs/figure2_tau_ranked_N5.pdf \
    figs/figure5_asl_curves_N5.pdf figs/figure6_spacing_N5.pdf
[ "$LAST_OK" -eq 0 ] || grep -q "<svg" figs/report_N5.html || _fail "compare --spacing" "figs/report_N5.html holds no inline SVG"
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m P -m RR -t paper -t randomised --seed 3 -b bm25 -o rand
has rand/discriminative_power_N5.csv rand/asl_curves_N5.csv rand/comparisons_with_baselines_N5.csv
[ "$LAST_OK" -eq 0 ] || grep -q "Randomised Tukey HSD" rand/tables5_6_significance_changes_N5.csv \
    || _fail "compare -t randomised" "Tables 5/6 lack the randomised Tukey HSD"
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -t rtukey -t permutation --missing-topics drop --no-effects
refused "did you mean 'bootstrap'" "$IRSCALE" compare "$Q" "$R" -N 5 -m AP -t bootsrap
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP --no-figures -o nofigs
[ "$LAST_OK" -eq 0 ] || ! ls nofigs/figure* >/dev/null 2>&1 || _fail "compare --no-figures" "figure files were written"
ok "$IRSCALE" compare "$Q" "$R" -N 5 -m AP --float32-scores --missing-topics drop --duplicates first --max-grade 2
ok "$IRSCALE" compare "$Q" "$R" -N 100 -m nDCG -m "RBP(p=0.8)" --approx 1e-4 --no-mid -o approx
has approx/report_N100.html approx/tables5_6_significance_changes_N100.csv
ok "$IRSCALE" compare "$Q" "$R" -N 12 -m AP --max-pairs 100000000 --no-mid
refused "holm" "$IRSCALE" compare "$Q" "$R" -N 5 -m AP --correction hochberg

echo "--- study"
ok "$IRSCALE" study --help
ok "$IRSCALE" study trec8-like "$Q" "$R" --depths 5 -o study -b bm25 --correction bonferroni --spacing
has study/report_N5.html study/report_N5.md study/table2_tau_unq.csv study/table3_tau_mid.csv \
    study/tables5_6_significance_changes_N5.csv study/provenance_N5.yaml study/comparisons_with_baselines_N5.csv
ok "$IRSCALE" study trec8-like "$Q" "$R" --depths 5,6 --alpha 0.1 --relevance lenient --correction holm --across-measures \
    --no-effects --no-measure-free --float32-scores --missing-topics drop --duplicates first --max-grade 2

echo "--- inspect"
ok "$IRSCALE" inspect AP -N 6 --plot pics
has pics/spacing_AP.png pics/spacing_AP.svg pics/hasse_N6_AP.png pics/balancing_AP.svg
ok "$IRSCALE" inspect "RBP(p=0.8)" -N 5
ok "$IRSCALE" inspect "RBP(p=0.8)" -N 5 --levels 4 --theory
ok "$IRSCALE" inspect nDCG -N 5 --levels 3 --theory
ok "$IRSCALE" inspect RR -N 5 --order weak
ok "$IRSCALE" inspect usermeasure:hits -N 5 --plot pics-user

echo "--- cache"
ok "$IRSCALE" cache info
out_has "$WORK/cache"
ok "$IRSCALE" cache clear

echo "--- the README's Python example"
cat >"$WORK/py/readme_example.py" <<'EOF'
import sys
import irscale
from irscale import stats
qrels, runs = sys.argv[1], sys.argv[2]
table = irscale.evaluate(qrels, runs, ["AP", "P@10", "nDCG@10"])
table.to_frame(); table.mean(); table.matrix("AP")
ranked = irscale.transform(table, ["AP", "RBP(p=0.8)"], depth=10)
ranked.mean()
study = irscale.compare(table, ["AP", "nDCG"], depth=5, correction="holm")
study.table2, study.table4, study.changes
study.write("api-out/")
print(stats.run_test("friedman", table.matrix("AP")).n_significant)
EOF
ok "$PY" "$WORK/py/readme_example.py" "$Q" "$R"
has api-out/report_N5.html

echo "--- options of the extras (irscale[parallel], irscale[parquet])"
if has_module dask && has_module distributed; then
    ok "$IRSCALE" rankmap AP -N 12 --no-cache --scheduler synchronous
    ok "$IRSCALE" transform "$Q" "$R" -m AP -N 12 --scheduler threads
else
    refused "irscale[parallel]" "$IRSCALE" rankmap AP -N 12 --no-cache --scheduler tcp://127.0.0.1:8786
    refused "irscale[parallel]" "$IRSCALE" transform "$Q" "$R" -m AP -N 12 --scheduler tcp://127.0.0.1:8786
    refused "irscale[parallel]" "$IRSCALE" compare "$Q" "$R" -m AP -N 12 --scheduler tcp://127.0.0.1:8786
fi
if has_module pyarrow; then
    cat >"$WORK/py/to_parquet.py" <<'EOF'
import sys
import pandas as pd
q, r = sys.argv[1:]
text = {"query_id": str, "doc_id": str}
pd.read_csv(q, sep=r"\s+", header=None, names=["query_id", "it", "doc_id", "relevance"], dtype=text).to_parquet("q.parquet")
pd.read_csv(r, sep=r"\s+", header=None, names=["query_id", "q0", "doc_id", "rank", "score", "tag"],
            dtype=text).to_parquet("bm25.parquet")
EOF
    ok "$PY" "$WORK/py/to_parquet.py" "$Q" "$R/bm25.txt"
    ok "$IRSCALE" evaluate q.parquet bm25.parquet -m AP
else
    : >empty.parquet
    refused "irscale[parquet]" "$IRSCALE" evaluate empty.parquet "$R"
    refused "irscale[parquet]" "$IRSCALE" evaluate "$Q" empty.parquet
fi

echo "smoke: $STEP steps in $((SECONDS - START)) s"
if [ "${#FAILED[@]}" -gt 0 ]; then
    echo "smoke: ${#FAILED[@]} FAILED:" >&2
    printf '  %s\n' "${FAILED[@]}" >&2
fi
echo "smoke: $((STEP - ${#FAILED[@]})) passed, ${#FAILED[@]} failed"
[ "${#FAILED[@]}" -eq 0 ]
