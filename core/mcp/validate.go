package mcp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// exposures are the values exposure and toolExposure take, after
// aliases, in pi's order (its error messages list them so).
var exposures = []Exposure{ExposureCodemode, ExposureDeferred, ExposureDirect, ExposureHidden}

// exposureAliases are older names pi still reads.
var exposureAliases = map[Exposure]Exposure{ExposureCodemodeDeferred: ExposureCodemode}

// Resolved is the exposure e stands for: an alias's current name, or e.
func (e Exposure) Resolved() Exposure {
	if r, ok := exposureAliases[e]; ok {
		return r
	}
	return e
}

// Valid reports whether e (aliases included) is an exposure pi knows.
func (e Exposure) Valid() bool {
	for _, x := range exposures {
		if e.Resolved() == x {
			return true
		}
	}
	return false
}

// exposureList is `"codemode", "deferred", "direct", "hidden"`.
func exposureList() string {
	q := make([]string, len(exposures))
	for i, e := range exposures {
		q[i] = `"` + string(e) + `"`
	}
	return strings.Join(q, ", ")
}

// loopbackHosts may serve OAuth redirects and plain-HTTP metadata.
var loopbackHosts = []string{"localhost", "127.0.0.1", "[::1]"}

func isLoopback(u *url.URL) bool {
	h := u.Hostname()
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	for _, l := range loopbackHosts {
		if h == l {
			return true
		}
	}
	return false
}

// ValidateServer checks one mcpServers entry as pi 1.5.2 does and decodes
// it, exposure aliases replaced by their current names. The error is pi's
// message (`server "docs": url must be an http or https URL`); Load adds
// the file. Fields ValidateServer does not know are allowed and ignored.
func ValidateServer(name string, raw json.RawMessage) (Server, error) {
	kind, msg := validateEntry(name, raw)
	if msg != "" {
		return Server{}, validationError(msg)
	}
	// The other transport's fields are not checked, as in pi, and not
	// kept: a stdio entry with a stray "url" is a stdio server.
	o, _ := decodeObject(raw)
	other := httpFields
	if kind == "http" {
		other = stdioFields
	}
	for _, k := range other {
		o.remove(k)
	}
	clean, _ := json.Marshal(o)
	var s Server
	if err := json.Unmarshal(clean, &s); err != nil {
		return Server{}, validationError(fmt.Sprintf("server %q: %v", name, err))
	}
	s.Exposure = s.Exposure.Resolved()
	for k, v := range s.ToolExposure {
		s.ToolExposure[k] = v.Resolved()
	}
	return s, nil
}

// ResolveAliases is a valid entry as written, with the exposure aliases
// of exposure and toolExposure replaced by their current names: pi's
// validated config, which keeps every other field as it is (what
// pi.getMcpServers() shows). An entry that is not an object is returned
// as it is.
func ResolveAliases(raw json.RawMessage) json.RawMessage {
	o, err := decodeObject(raw)
	if err != nil {
		return raw
	}
	resolve := func(v json.RawMessage) json.RawMessage {
		if s, ok := asString(v); ok && Exposure(s).Resolved() != Exposure(s) {
			if b, err := marshal(string(Exposure(s).Resolved())); err == nil {
				return b
			}
		}
		return v
	}
	if v, ok := o.get("exposure"); ok {
		o.set("exposure", resolve(v))
	}
	if v, ok := o.get("toolExposure"); ok {
		if te, err := decodeObject(v); err == nil {
			for i := range te {
				te[i].value = resolve(te[i].value)
			}
			if b, err := json.Marshal(te); err == nil {
				o.set("toolExposure", b)
			}
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return raw
	}
	return b
}

// The fields only one transport reads.
var (
	stdioFields = []string{"command", "args", "env", "cwd"}
	httpFields  = []string{"url", "headers", "oauth", "auth"}
)

// IsHTTP reports whether a validated entry is a streamable HTTP server
// (else it is a stdio one).
func (s Server) IsHTTP() bool { return s.URL != "" }

// validationError is a message of ValidateServer.
type validationError string

func (e validationError) Error() string { return string(e) }

// ValidName reports whether name may name a server: letters, digits, "_"
// and "-" (ASCII), at least one.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if !(c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// validateEntry is pi's check of one entry, in pi's order (the first
// problem is the one reported), "" when the entry is valid, with its
// transport: "stdio" or "http".
func validateEntry(name string, raw json.RawMessage) (kind, msg string) {
	msg = checkEntry(name, raw, &kind)
	return kind, msg
}

func checkEntry(name string, raw json.RawMessage, kind *string) string {
	if !ValidName(name) {
		return fmt.Sprintf(`invalid server name %q (use letters, digits, "_" and "-")`, name)
	}
	o, err := decodeObject(raw)
	if err != nil {
		return fmt.Sprintf("server %q must be an object", name)
	}
	bad := func(format string, a ...any) string {
		return fmt.Sprintf("server %q: ", name) + fmt.Sprintf(format, a...)
	}
	if v, ok := o.get("enabled"); ok && !isKind(v, "a boolean") {
		return bad("enabled must be a boolean")
	}
	if v, ok := o.get("description"); ok && !isKind(v, "a string") {
		return bad("description must be a string")
	}
	if v, ok := o.get("timeout"); ok {
		var f float64
		if !isKind(v, "a number") || json.Unmarshal(v, &f) != nil || !(f > 0) {
			return bad("timeout must be a positive number of seconds")
		}
	}
	typ, hasType := o.get("type")
	typeName, typeIsString := asString(typ)
	if hasType && typeIsString && typeName == TypeSSE {
		// pi's message, and the hint its documentation gives.
		return bad("legacy SSE transport is not supported; use the streamable HTTP URL (servers that document an SSE endpoint often serve streamable HTTP at /mcp instead of /sse)")
	}
	if hasType && (!typeIsString || typeName != TypeStdio && typeName != TypeHTTP && typeName != TypeStreamableHTTP) {
		// pi says only that command or url is missing; naming the type
		// is plainer.
		return bad(`type must be "stdio", "http" or "streamable-http"`)
	}
	if u, ok := o.get("url"); ok && isKind(u, "a string") && (!hasType || typeName == TypeHTTP || typeName == TypeStreamableHTTP) {
		*kind = "http"
		if msg := checkHTTP(o, u); msg != "" {
			return bad("%s", msg)
		}
	} else if c, ok := o.get("command"); ok && isKind(c, "a string") && (!hasType || typeName == TypeStdio) {
		*kind = "stdio"
		if msg := checkStdio(o); msg != "" {
			return bad("%s", msg)
		}
	} else {
		return fmt.Sprintf(`server %q needs either "command" (stdio) or "url" (streamable HTTP)`, name)
	}
	if msg := checkExposures(o); msg != "" {
		return bad("%s", msg)
	}
	if *kind == "http" {
		if msg := checkAuth(o); msg != "" {
			return bad("%s", msg)
		}
	}
	return ""
}

func checkStdio(o object) string {
	if v, ok := o.get("args"); ok {
		var args []json.RawMessage
		if !isKind(v, "an array") || json.Unmarshal(v, &args) != nil {
			return "args must be an array of strings"
		}
		for _, a := range args {
			if !isKind(a, "a string") {
				return "args must be an array of strings"
			}
		}
	}
	if v, ok := o.get("env"); ok && !stringMap(v) {
		return "env must map names to strings"
	}
	if v, ok := o.get("cwd"); ok && !isKind(v, "a string") {
		return "cwd must be a string"
	}
	return ""
}

func checkHTTP(o object, rawURL json.RawMessage) string {
	s, _ := asString(rawURL)
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "url must be an http or https URL"
	}
	if v, ok := o.get("headers"); ok && !stringMap(v) {
		return "headers must map names to strings"
	}
	if v, ok := o.get("oauth"); ok {
		return checkOAuth(v)
	}
	return ""
}

func checkOAuth(raw json.RawMessage) string {
	o, err := decodeObject(raw)
	if err != nil {
		return "oauth must be an object"
	}
	str := func(k string) (string, bool, bool) { // value, present, is a string
		v, ok := o.get(k)
		if !ok {
			return "", false, false
		}
		s, isStr := asString(v)
		return s, true, isStr
	}
	if _, has, ok := str("clientId"); has && !ok {
		return "oauth.clientId must be a string"
	}
	if _, has, ok := str("clientSecret"); has && !ok {
		return "oauth.clientSecret must be a string"
	}
	port := 0
	if v, ok := o.get("callbackPort"); ok {
		var f float64
		if !isKind(v, "a number") || json.Unmarshal(v, &f) != nil || f != float64(int(f)) || f < 1 || f > 65535 {
			return "oauth.callbackPort must be a port number"
		}
		port = int(f)
	}
	var callback *url.URL
	if cb, has, ok := str("callbackUrl"); has {
		u, err := url.Parse(cb)
		if !ok || err != nil || u.Scheme != "http" || !isLoopback(u) || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(cb, "#") {
			return "oauth.callbackUrl must be an http URI on localhost, 127.0.0.1, or [::1] without query or fragment"
		}
		if p := u.Port(); p != "" && port != 0 && p != fmt.Sprint(port) {
			return "oauth.callbackUrl and oauth.callbackPort name different ports"
		}
		callback = u
	}
	if _, has, ok := str("scope"); has && !ok {
		return "oauth.scope must be a string"
	}
	if n, has, ok := str("clientName"); has && (!ok || strings.TrimSpace(n) == "") {
		return "oauth.clientName must be a non-empty string"
	}
	if reg, has, ok := str("clientRegistration"); has && !(ok && (reg == "auto" || reg == "dcr")) {
		if !ok || reg != "cimd" {
			return `oauth.clientRegistration must be "auto", "dcr", or "cimd"`
		}
		_, hasID, _ := str("clientId")
		_, hasName, _ := str("clientName")
		if hasID || hasName {
			return `oauth.clientRegistration "cimd" cannot be combined with oauth.clientId or oauth.clientName`
		}
		if callback != nil && (callback.Hostname() == "::1" || callback.Path != "/callback") {
			return `oauth.clientRegistration "cimd" requires oauth.callbackUrl on localhost or 127.0.0.1 with path /callback`
		}
	}
	if m, has, ok := str("authServerMetadataUrl"); has {
		u, err := url.Parse(m)
		if !ok || err != nil || u.Host == "" || !(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u)) {
			return "oauth.authServerMetadataUrl must be an https URL, or http on localhost, 127.0.0.1, or [::1]"
		}
	}
	return ""
}

func checkExposures(o object) string {
	if v, ok := o.get("exposure"); ok {
		s, isStr := asString(v)
		if !isStr || !Exposure(s).Valid() {
			return "exposure must be one of " + exposureList()
		}
	}
	if v, ok := o.get("toolExposure"); ok {
		te, err := decodeObject(v)
		if err != nil {
			return "toolExposure must map tool names to exposures"
		}
		for _, m := range te {
			s, isStr := asString(m.value)
			if !isStr || !Exposure(s).Valid() {
				return fmt.Sprintf("toolExposure %q must be one of %s", m.key, exposureList())
			}
		}
	}
	return ""
}

func checkAuth(o object) string {
	v, ok := o.get("auth")
	if !ok {
		return ""
	}
	a, err := decodeObject(v)
	p, _ := a.get("provider")
	if name, isStr := asString(p); err != nil || !isStr || name == "" {
		return "auth.provider must be a provider name"
	}
	raw, _ := o.get("url")
	s, _ := asString(raw)
	u, _ := url.Parse(s)
	if u.Scheme != "https" && !isLoopback(u) {
		return "auth requires an https URL, or http on localhost, 127.0.0.1, or [::1]"
	}
	return ""
}
