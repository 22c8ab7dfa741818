package codemode

import (
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// defaultSearchLimit is how many tools searchTools() returns unless told.
const defaultSearchLimit = 8

// The weights of pi's ranking: a query word in the tool's name counts
// three times its IDF (more than any number of mentions in the
// description), one in the namespace's name, description or
// instructions half of it.
const (
	nameWeight      = 3
	namespaceWeight = 0.5
	bm25K1          = 1.2
	bm25B           = 0.75
)

var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "it": true, "of": true, "on": true, "or": true,
	"that": true, "the": true, "this": true, "to": true, "with": true,
}

// The search's expressions, compiled on first use: not on every start
// of gopi (TestOwnPackagesDoLittleAtInit).
var (
	lowerUpper = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([a-z0-9])([A-Z])`) })
	upperRun   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Z]+)([A-Z][a-z])`) })
	asciiWord  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+$`) })
	esSuffix   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(ches|shes|sses|xes|zes)$`) })
)

// stem is a naive singular: issues → issue, searches → search.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && esSuffix().MatchString(w):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		return w[:len(w)-1]
	}
	return w
}

// tokenize splits text into search terms: identifiers at their word
// boundaries (camelCase, snake_case), lower case, without English stop
// words, ASCII words in a singular form.
func tokenize(text string) []string {
	s := norm.NFC.String(text)
	s = lowerUpper().ReplaceAllString(s, "$1 $2")
	s = upperRun().ReplaceAllString(s, "$1 $2")
	s = strings.ToLower(s)
	words := strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r))
	})
	out := words[:0]
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		if asciiWord().MatchString(w) {
			w = stem(w)
		}
		out = append(out, w)
	}
	return out
}

// searchDoc is one tool as searchTools() sees it.
type searchDoc struct {
	name      string
	text      string // description, and the parameters' names and descriptions
	namespace string // the namespace's name, description and instructions
}

// docOf is a tool's search document.
func docOf(t Tool) searchDoc {
	parts := []string{t.Spec.Description}
	if s := parseSchema(t.Spec.Parameters); s != nil {
		schemaText(s, &renderer{root: s}, &parts, 0)
	}
	var ns string
	if t.Namespace != nil {
		ns = strings.Join([]string{t.Namespace.Name, t.Namespace.Description, t.Namespace.Instructions}, " ")
	}
	kept := parts[:0]
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return searchDoc{name: t.Spec.Name, text: strings.Join(kept, " "), namespace: ns}
}

// schemaText collects a schema's descriptions and property names.
func schemaText(s *schema, r *renderer, parts *[]string, depth int) {
	s = r.resolve(s)
	if s == nil || depth > 16 {
		return
	}
	if s.Description != "" {
		*parts = append(*parts, s.Description)
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		*parts = append(*parts, n)
		schemaText(s.Properties[n], r, parts, depth+1)
	}
	if s.Items != nil {
		schemaText(s.Items, r, parts, depth+1)
	}
	for _, v := range append(s.AnyOf, s.OneOf...) {
		schemaText(v, r, parts, depth+1)
	}
}

// normalizeName is a name lower-cased with the characters that cannot be
// in an identifier as "_".
func normalizeName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(name)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '$' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// rank orders docs by relevance to query with Okapi BM25 over the text,
// the name and the namespace as separate fields, as pi's searchTools()
// and tool_search do: a query that is a tool's whole name (or its part
// after "__") ranks it first; then tools matching more of the query's
// terms; then the score, where a tool whose whole local name is in the
// query earns one more match of every term. Ties keep the docs' order.
func rank(query string, docs []searchDoc, limit int) []string {
	terms := uniq(tokenize(query))
	if len(terms) == 0 || len(docs) == 0 || limit <= 0 {
		return nil
	}
	type indexed struct {
		name       string
		nameTerms  map[string]bool
		localTerms []string
		counts     map[string]int
		length     int
		nsTerms    map[string]bool
	}
	idx := make([]indexed, len(docs))
	total := 0
	for i, d := range docs {
		counts := map[string]int{}
		n := 0
		for _, t := range tokenize(d.text) {
			counts[t]++
			n++
		}
		segs := strings.Split(d.name, "__")
		idx[i] = indexed{
			name: d.name, nameTerms: set(tokenize(d.name)), localTerms: uniq(tokenize(segs[len(segs)-1])),
			counts: counts, length: n, nsTerms: set(tokenize(d.namespace)),
		}
		total += n
	}
	avg := float64(total) / float64(len(idx))
	if avg == 0 {
		avg = 1
	}
	idf := map[string]float64{}
	bonus := 0.0
	for _, t := range terms {
		freq := 0
		for _, d := range idx {
			if d.nameTerms[t] || d.counts[t] > 0 || d.nsTerms[t] {
				freq++
			}
		}
		idf[t] = math.Log(1 + (float64(len(idx)-freq)+0.5)/(float64(freq)+0.5))
		bonus += idf[t]
	}
	exact := normalizeName(query)
	queryTerms := set(terms)
	type match struct {
		name    string
		score   float64
		covered int
		exact   bool
	}
	var matches []match
	for _, d := range idx {
		norm := bm25K1 * (1 - bm25B + bm25B*float64(d.length)/avg)
		score, covered := 0.0, 0
		for _, t := range terms {
			c := float64(d.counts[t])
			w := c * (bm25K1 + 1) / (c + norm)
			if d.nameTerms[t] {
				w += nameWeight
			}
			if d.nsTerms[t] {
				w += namespaceWeight
			}
			if w > 0 {
				covered++
			}
			score += idf[t] * w
		}
		if score == 0 {
			continue
		}
		if len(d.localTerms) > 0 && !slices.ContainsFunc(d.localTerms, func(t string) bool { return !queryTerms[t] }) {
			score += bonus
		}
		n := normalizeName(d.name)
		matches = append(matches, match{d.name, score, covered, n == exact || strings.HasSuffix(n, "__"+exact)})
	}
	slices.SortStableFunc(matches, func(a, b match) int {
		switch {
		case a.exact != b.exact:
			if a.exact {
				return -1
			}
			return 1
		case a.covered != b.covered:
			return b.covered - a.covered
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return 0
	})
	if len(matches) > limit {
		matches = matches[:limit]
	}
	out := make([]string, len(matches))
	for i, m := range matches {
		out[i] = m.name
	}
	return out
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func set(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// jsonOf marshals v for a script; values that cannot fail.
func jsonOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}
