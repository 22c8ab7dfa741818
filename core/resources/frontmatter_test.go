package resources

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFrontmatter(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    frontmatter
		body    string
		wantErr bool
	}{
		{name: "none", in: "Just text\n\n", want: frontmatter{}, body: "Just text\n\n"},
		{name: "none keeps CR normalized", in: "a\r\nb\rc", want: frontmatter{}, body: "a\nb\nc"},
		{name: "basic", in: "---\ndescription: hi\n---\n\n  body\n", want: frontmatter{"description": "hi"}, body: "body"},
		{name: "crlf", in: "---\r\ndescription: hi\r\nname: x\r\n---\r\nline1\r\nline2\r\n", want: frontmatter{"description": "hi", "name": "x"}, body: "line1\nline2"},
		{name: "empty header", in: "---\n---\nbody", want: frontmatter{}, body: "body"},
		{name: "blank header", in: "---\n  \n---\nbody", want: frontmatter{}, body: "body"},
		{name: "unclosed", in: "---\ndescription: hi\nbody", want: frontmatter{}, body: "---\ndescription: hi\nbody"},
		{name: "scalar header", in: "---\njust words\n---\nbody", want: frontmatter{}, body: "body"},
		{name: "list header", in: "---\n- a\n- b\n---\nbody", want: frontmatter{}, body: "body"},
		{name: "bool", in: "---\ndisable-model-invocation: true\n---\n", want: frontmatter{"disable-model-invocation": true}, body: ""},
		{name: "bad yaml", in: "---\ndescription: [unclosed\n---\nbody", wantErr: true},
		{name: "duplicate key", in: "---\na: 1\na: 2\n---\nbody", wantErr: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fm, body, err := parseFrontmatter(c.in)
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, fm)
			assert.Equal(t, c.body, body)
		})
	}
}

func TestStripFrontmatter(t *testing.T) {
	assert.Equal(t, "Body here", stripFrontmatter("---\r\nname: a\r\n---\r\n\r\nBody here\r\n"))
	assert.Equal(t, "no header\n", stripFrontmatter("no header\n"))
}
