package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// FieldError says why a JSON object did not fit its Go type: Field is the
// field at fault in dotted form ("" when the whole value is wrong), Reason
// the rest of the sentence ("must be a string, got number").
type FieldError struct {
	Field  string
	Reason string
}

// DecodeObject reads params, which must be a JSON object (nothing or null
// reads as {}), into P. A value of the wrong JSON type names its field, so
// every wire gopi serves (commands here, the extension pipe in core/ext)
// answers bad params in the same words.
func DecodeObject[P any](params json.RawMessage) (P, *FieldError) {
	var p P
	params = bytes.TrimSpace(params)
	if len(params) == 0 || bytes.Equal(params, []byte("null")) {
		params = []byte("{}")
	}
	if params[0] != '{' {
		return p, &FieldError{Reason: "params must be a JSON object"}
	}
	if err := json.Unmarshal(params, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "?"
			}
			return p, &FieldError{Field: field, Reason: fmt.Sprintf("must be %s, got %s", jsonKind(te.Type.Kind().String()), te.Value)}
		}
		return p, &FieldError{Reason: err.Error()}
	}
	return p, nil
}

// jsonKind names a Go kind as the JSON type a client would have to send.
func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "int", "int64", "float64", "int32":
		return "a number"
	case "slice":
		return "an array"
	case "struct", "map", "ptr":
		return "an object"
	}
	return goKind
}
