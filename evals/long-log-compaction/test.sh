# Passes when failed.txt lists the ids of the 500s in log order and the log
# is untouched. The log is long enough that reading it all needs a
# compaction in the middle of the run (args.txt sets a small window).
set -eu
git diff --quiet HEAD -- logs || { echo "logs/ was changed"; exit 1; }
[ -f failed.txt ] || { echo "no failed.txt"; exit 1; }
want=$(awk '$4 == 500 { sub("id=", "", $6); print $6 }' logs/requests.log)
got=$(cat failed.txt)
[ "$got" = "$want" ] || { printf 'failed.txt:\n%s\nwant:\n%s\n' "$got" "$want"; exit 1; }
