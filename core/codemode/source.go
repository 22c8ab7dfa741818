package codemode

import (
	"encoding/json"
	"fmt"
	"strings"
)

// optionsPrefix starts the optional first line of a script.
const optionsPrefix = "// @options:"

// maxTimeoutMS is the largest timeout_ms accepted (pi's bound, the
// largest delay JavaScript's timers take).
const maxTimeoutMS = 2_147_483_647

// options are what a script's first line may set.
type options struct {
	// maxOutputTokens limits the output; 0 when unset.
	maxOutputTokens int
	hasMaxOutput    bool
	// timeoutMS is the script's hard deadline; 0: none.
	timeoutMS int64
}

// parseSource splits the optional options line from a script, as pi
// does: it must be the first line, and name only max_output_tokens and
// timeout_ms. The errors are the tool's result text.
func parseSource(input string) (code string, opts options, err error) {
	if strings.TrimSpace(input) == "" {
		return "", opts, sourceErrorf("expected JavaScript source (not empty): JavaScript only, optionally with a first line `// @options: {\"max_output_tokens\": 1000}`")
	}
	lines := strings.Split(input, "\n")
	for i, line := range lines {
		if i > 0 && strings.HasPrefix(strings.TrimLeft(line, " \t"), optionsPrefix) {
			return "", opts, sourceErrorf("the %s line must be the first line of the input; found one on line %d", optionsPrefix, i+1)
		}
	}
	first := strings.TrimLeft(strings.TrimSuffix(lines[0], "\r"), " \t")
	if !strings.HasPrefix(first, optionsPrefix) {
		return input, opts, nil
	}
	if nl := strings.IndexByte(input, '\n'); nl >= 0 {
		code = input[nl:]
	}
	if strings.TrimSpace(code) == "" {
		return "", opts, sourceErrorf("the @options line must be followed by JavaScript on the next lines")
	}
	opts, err = parseOptions(strings.TrimSpace(strings.TrimPrefix(first, optionsPrefix)))
	return code, opts, err
}

const supported = "`max_output_tokens` and `timeout_ms`"

func parseOptions(directive string) (options, error) {
	var opts options
	var fields map[string]json.RawMessage
	if directive == "" {
		return opts, sourceErrorf("@options must be a JSON object with the fields %s", supported)
	}
	if err := json.Unmarshal([]byte(directive), &fields); err != nil || fields == nil {
		if err == nil {
			err = fmt.Errorf("not an object")
		}
		return opts, sourceErrorf("@options must be a JSON object with the fields %s: %v", supported, err)
	}
	for key, raw := range fields {
		var n float64
		switch key {
		case "max_output_tokens":
			if json.Unmarshal(raw, &n) != nil || n < 0 || n != float64(int64(n)) || n > 1<<53-1 {
				return opts, sourceErrorf("@options field `max_output_tokens` must be a non-negative safe integer")
			}
			opts.maxOutputTokens, opts.hasMaxOutput = int(n), true
		case "timeout_ms":
			if json.Unmarshal(raw, &n) != nil || n <= 0 || n != float64(int64(n)) || n > maxTimeoutMS {
				return opts, sourceErrorf("@options field `timeout_ms` must be a positive integer up to %d", maxTimeoutMS)
			}
			opts.timeoutMS = int64(n)
		default:
			return opts, sourceErrorf("@options supports only %s; got `%s`", supported, key)
		}
	}
	return opts, nil
}
