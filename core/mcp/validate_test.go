package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The messages are pi 1.5.2's (validateMcpServerConfig), checked against
// its package; the two marked gopi's say more than pi does.
func TestValidateServer(t *testing.T) {
	const exposures = `"codemode", "deferred", "direct", "hidden"`
	for _, tc := range []struct {
		name, entry, want string
	}{
		{"fs", `{"command":"npx","args":["-y","x"]}`, ""},
		{"docs", `{"url":"https://example.com/mcp","headers":{"Authorization":"Bearer ${T}"}}`, ""},
		{"a-b_C9", `{"type":"streamable-http","url":"http://127.0.0.1:3000/mcp"}`, ""},
		{"s", `{"type":"http","url":"https://x"}`, ""},
		{"s", `{"type":"stdio","command":"x","cwd":"~/w","env":{"K":"v"}}`, ""},
		{"bad name", `{"command":"x"}`, `invalid server name "bad name" (use letters, digits, "_" and "-")`},
		{"dé", `{"command":"x"}`, `invalid server name "dé" (use letters, digits, "_" and "-")`},
		{"", `{"command":"x"}`, `invalid server name "" (use letters, digits, "_" and "-")`},
		{"s", `"str"`, `server "s" must be an object`},
		{"s", `null`, `server "s" must be an object`},
		{"s", `{"command":"x","enabled":"yes"}`, `server "s": enabled must be a boolean`},
		{"s", `{"command":"x","description":5}`, `server "s": description must be a string`},
		{"s", `{"command":"x","timeout":0}`, `server "s": timeout must be a positive number of seconds`},
		{"s", `{"command":"x","timeout":"5"}`, `server "s": timeout must be a positive number of seconds`},
		{"s", `{"type":"sse","url":"https://x/sse"}`, `server "s": legacy SSE transport is not supported; use the streamable HTTP URL (servers that document an SSE endpoint often serve streamable HTTP at /mcp instead of /sse)`},
		// gopi's: pi says command or url is missing.
		{"s", `{"type":"websocket","url":"https://x"}`, `server "s": type must be "stdio", "http" or "streamable-http"`},
		{"s", `{"type":"stdio","url":"https://x"}`, `server "s" needs either "command" (stdio) or "url" (streamable HTTP)`},
		{"s", `{"type":"http","command":"x"}`, `server "s" needs either "command" (stdio) or "url" (streamable HTTP)`},
		{"s", `{}`, `server "s" needs either "command" (stdio) or "url" (streamable HTTP)`},
		{"s", `{"command":["npx"]}`, `server "s" needs either "command" (stdio) or "url" (streamable HTTP)`},
		{"s", `{"url":"ftp://x"}`, `server "s": url must be an http or https URL`},
		{"s", `{"url":"not a url"}`, `server "s": url must be an http or https URL`},
		{"s", `{"url":"https://x","headers":{"a":1}}`, `server "s": headers must map names to strings`},
		{"s", `{"command":"x","args":"a b"}`, `server "s": args must be an array of strings`},
		{"s", `{"command":"x","args":["a",1]}`, `server "s": args must be an array of strings`},
		{"s", `{"command":"x","env":{"A":1}}`, `server "s": env must map names to strings`},
		{"s", `{"command":"x","cwd":1}`, `server "s": cwd must be a string`},
		{"s", `{"command":"x","exposure":"lazy"}`, `server "s": exposure must be one of ` + exposures},
		{"s", `{"command":"x","exposure":"codemode-deferred","toolExposure":{"a*":"codemode-deferred"}}`, ""},
		{"s", `{"command":"x","toolExposure":{"a":"x"}}`, `server "s": toolExposure "a" must be one of ` + exposures},
		{"s", `{"command":"x","toolExposure":[1]}`, `server "s": toolExposure must map tool names to exposures`},
		{"s", `{"url":"https://x","oauth":"id"}`, `server "s": oauth must be an object`},
		{"s", `{"url":"https://x","oauth":{"clientId":1}}`, `server "s": oauth.clientId must be a string`},
		{"s", `{"url":"https://x","oauth":{"callbackPort":70000}}`, `server "s": oauth.callbackPort must be a port number`},
		{"s", `{"url":"https://x","oauth":{"callbackPort":80.5}}`, `server "s": oauth.callbackPort must be a port number`},
		{"s", `{"url":"https://x","oauth":{"callbackUrl":"https://localhost/cb"}}`, `server "s": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment`},
		{"s", `{"url":"https://x","oauth":{"callbackUrl":"http://localhost/cb?x=1"}}`, `server "s": oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment`},
		{"s", `{"url":"https://x","oauth":{"callbackUrl":"http://[::1]:8/cb","callbackPort":8}}`, ""},
		{"s", `{"url":"https://x","oauth":{"callbackUrl":"http://localhost:1/cb","callbackPort":2}}`, `server "s": oauth.callbackUrl and oauth.callbackPort name different ports`},
		{"s", `{"url":"https://x","oauth":{"clientRegistration":"x"}}`, `server "s": oauth.clientRegistration must be "auto", "dcr", or "cimd"`},
		{"s", `{"url":"https://x","oauth":{"clientRegistration":"cimd","clientId":"a"}}`, `server "s": oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName`},
		{"s", `{"url":"https://x","oauth":{"clientRegistration":"cimd","callbackUrl":"http://[::1]/callback"}}`, `server "s": oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback`},
		{"s", `{"url":"https://x","oauth":{"clientRegistration":"cimd","callbackUrl":"http://127.0.0.1:9/callback"}}`, ""},
		{"s", `{"url":"https://x","oauth":{"clientName":" "}}`, `server "s": oauth.clientName must be a non-empty string`},
		{"s", `{"url":"https://x","oauth":{"authServerMetadataUrl":"http://example.com/x"}}`, `server "s": oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]`},
		{"s", `{"url":"http://x","auth":{"provider":"anthropic"}}`, `server "s": auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]`},
		{"s", `{"url":"https://x","auth":{}}`, `server "s": auth.provider must be a provider name`},
		// pi checks only the chosen transport's fields.
		{"s", `{"url":5,"command":"x"}`, ""},
	} {
		t.Run(tc.name+" "+tc.entry, func(t *testing.T) {
			_, err := ValidateServer(tc.name, json.RawMessage(tc.entry))
			if tc.want == "" {
				assert.NoError(t, err)
			} else {
				assert.EqualError(t, err, tc.want)
			}
		})
	}
}

func TestValidateServerResolvesAliasesAndDropsTheOtherTransport(t *testing.T) {
	s, err := ValidateServer("s", json.RawMessage(`{"command":"x","url":5,"headers":{"a":"b"},"exposure":"codemode-deferred","toolExposure":{"b*":"codemode-deferred","a":"direct"}}`))
	require.NoError(t, err)
	assert.Equal(t, ExposureCodemode, s.Exposure)
	assert.Equal(t, map[string]Exposure{"b*": ExposureCodemode, "a": ExposureDirect}, s.ToolExposure)
	assert.False(t, s.IsHTTP())
	assert.Empty(t, s.Headers)

	s, err = ValidateServer("s", json.RawMessage(`{"url":"https://x","command":"npx","unknown":{"kept":"no"}}`))
	require.NoError(t, err)
	assert.True(t, s.IsHTTP())
	assert.Empty(t, s.Command)
}

// pi.getMcpServers() shows an extension's config as pi validated it: the
// aliases resolved, every other field as it was, in its order.
func TestResolveAliases(t *testing.T) {
	got := ResolveAliases(json.RawMessage(`{"command":"x", "extra":{"b":1,"a":2},"exposure":"codemode-deferred","toolExposure":{"b*":"codemode-deferred","a":"direct"}}`))
	assert.Equal(t, `{"command":"x","extra":{"b":1,"a":2},"exposure":"codemode","toolExposure":{"b*":"codemode","a":"direct"}}`, string(got))
	assert.Equal(t, `[1]`, string(ResolveAliases(json.RawMessage(`[1]`))))
}
