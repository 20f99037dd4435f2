#!/usr/bin/env bash
# Does the suite still catch the five breaks in breaks.tsv? For each: patch one line of a clean
# tree, run `vitest run --bail 1` (a break is caught when any test fails), record which files
# failed and how long it took, put the line back. Not part of npm test: it runs the suite five
# times. Usage: bash test/catch-rate/run.sh [name ...]   (default: all five)
# Writes test/catch-rate/results/<name>.json (vitest's JSON report) and prints one line per break.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
if ! git diff --quiet -- src; then echo "catch-rate: src/ has uncommitted changes; run it on a clean tree" >&2; exit 2; fi
out="$root/test/catch-rate/results"
mkdir -p "$out"
npx tsx test/setup/ensure-chromium.ts >/dev/null
status=0
while IFS=$'\t' read -r name file expr marker; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  if [[ $# -gt 0 && ! " $* " == *" $name "* ]]; then continue; fi
  cp "$file" "$file.catch-rate-orig"
  sed -i "$expr" "$file"
  if ! grep -qF -- "$marker" "$file"; then
    mv "$file.catch-rate-orig" "$file"
    echo "$name: the patch did not apply to $file (the line moved?): fix breaks.tsv" >&2
    status=1; continue
  fi
  t0=$SECONDS
  # shellcheck disable=SC2086
  npx vitest run --bail 1 ${CATCH_RATE_VITEST_ARGS:-} --reporter=json --outputFile.json="$out/$name.json" >"$out/$name.log" 2>&1
  code=$?
  mv "$file.catch-rate-orig" "$file"
  failed=$(node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const files = r.testResults.filter((f) => f.assertionResults.some((a) => a.status === "failed") || (f.status === "failed" && f.message));
    console.log(files.map((f) => require("path").relative(process.cwd(), f.name)).join(" ") || "-");
  ' "$out/$name.json" 2>/dev/null || echo "?")
  if [[ $code -ne 0 && "$failed" != "-" ]]; then
    echo "$name: caught in $((SECONDS - t0)) s by $failed"
  else
    echo "$name: NOT caught (vitest exit $code, $((SECONDS - t0)) s)"; status=1
  fi
done < test/catch-rate/breaks.tsv
git diff --quiet -- src || { echo "catch-rate: src/ was left changed" >&2; exit 1; }
exit $status
