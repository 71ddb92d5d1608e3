#!/bin/sh
# The client command of the official MCP conformance suite: it runs
# tiny-go as a user would against the scenario's server (the last
# argument), in a fresh home. $TINY_GO is the tiny-go binary; the suite
# sets MCP_CONFORMANCE_SCENARIO and, for some scenarios,
# MCP_CONFORMANCE_CONTEXT (pre-registered client credentials, a key, an
# enterprise IdP and its ID token).
#   auth/*: `tiny-go mcp login conf` signs in, with a BROWSER that fetches
#           the authorization URL and follows its redirect to tiny-go's
#           loopback; then the scenario's tool is called.
set -eu
url=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME="$work/home" XDG_CONFIG_HOME="$work/config"
mkdir -p "$HOME" "$work/project"
cd "$work/project"

printf '#!/bin/sh\nexec curl -fsSL -o /dev/null "$1"\n' >"$work/browser"
chmod +x "$work/browser"
export BROWSER="$work/browser"

# The server's entry in .mcp.json, with the context's credentials; an
# enterprise IdP's ID token is read from the environment, where a single
# sign-on tool would leave it.
node "$here/config.mjs" "$url" "$work" >.mcp.json
IDP_ID_TOKEN=$(node -e 'process.stdout.write(JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}").idp_id_token || "")')
export IDP_ID_TOKEN

scenario=${MCP_CONFORMANCE_SCENARIO:-initialize}
case $scenario in
auth/*)
	"$TINY_GO" mcp login conf
	"$TINY_GO" mcp call conf test-tool
	;;
initialize) "$TINY_GO" mcp call conf ;;
tools_call) "$TINY_GO" mcp call conf add_numbers '{"a":5,"b":3}' ;;
sse-retry) "$TINY_GO" mcp call conf test_reconnection ;;
elicitation-sep1034-client-defaults)
	# On a terminal (script(1) gives it one), pressing Enter at each field
	# takes the form's defaults, and at the end sends them.
	yes '' | script -qec "'$TINY_GO' mcp call conf test_client_elicitation_defaults" /dev/null
	;;
*)
	echo "client.sh: no tiny-go command for scenario $scenario" >&2
	exit 2
	;;
esac
