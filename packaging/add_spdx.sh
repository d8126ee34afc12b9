#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# add_spdx.sh [--check]: puts "SPDX-License-Identifier: Apache-2.0" at the top of every
# tracked source file that lacks it (after a shebang line), in that language's comment.
# With --check it changes nothing and lists the files without one (exit 1 if any):
# tests/packaging runs it so that a new file cannot land without its licence line.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[[ "${1:-}" == --check ]] && check=1
tag="SPDX-License-Identifier: Apache-2.0"
missing=0
while IFS= read -r f; do
  case "$f" in
    *.cc | *.h | *.cu | *.js | *.h.in) c="//" ;;
    *.sh | *.py | *CMakeLists.txt | *.cmake | .ci/run | *.bash-completion.in) c="#" ;;
    *) continue ;;
  esac
  [[ "$f" == tests/data/* || "$f" == tests/fuzz/corpus/* ]] && continue
  if head -5 "$f" | grep -q "SPDX-License-Identifier"; then continue; fi
  if ((check)); then echo "no SPDX identifier: $f"; missing=1; continue; fi
  if head -1 "$f" | grep -q '^#!'; then
    sed -i "1a $c $tag" "$f"
  else
    sed -i "1i $c $tag" "$f"
  fi
done < <(git ls-files)
exit $missing
