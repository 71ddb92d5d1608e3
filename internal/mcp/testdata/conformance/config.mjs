// Prints the .mcp.json of a conformance scenario: the server at argv[2],
// and the credentials MCP_CONFORMANCE_CONTEXT holds, as a user would write
// them (a private key goes to a file under argv[3], an ID token to the
// environment).
import { writeFileSync } from "node:fs";

const [url, work] = process.argv.slice(2);
const ctx = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}");
const server = { type: "http", url, oauth: {} };
if (ctx.private_key_pem) {
  const key = `${work}/client-key.pem`;
  writeFileSync(key, ctx.private_key_pem, { mode: 0o600 });
  server.oauth = { grant: "client_credentials", clientId: ctx.client_id, privateKeyFile: key, signingAlgorithm: ctx.signing_algorithm };
} else if (ctx.idp_id_token) {
  // Enterprise-managed authorization: client.sh puts the IdP's ID token in
  // $IDP_ID_TOKEN, as a single sign-on tool would.
  server.oauth = {
    grant: "enterprise", clientId: ctx.client_id, clientSecret: ctx.client_secret,
    idp: { issuer: ctx.idp_issuer, clientId: ctx.idp_client_id, idToken: "${IDP_ID_TOKEN}" },
  };
} else if (ctx.client_id && (process.env.MCP_CONFORMANCE_SCENARIO || "").startsWith("auth/client-credentials")) {
  server.oauth = { grant: "client_credentials", clientId: ctx.client_id, clientSecret: ctx.client_secret };
} else if (ctx.client_id) {
  server.oauth = { clientId: ctx.client_id, clientSecret: ctx.client_secret };
}
// tiny-go's client ID metadata document, for servers that take one.
server.oauth.clientMetadataUrl = "https://conformance-test.local/client-metadata.json";
process.stdout.write(JSON.stringify({ mcpServers: { conf: server } }, null, 2) + "\n");
