package codemode

import (
	"cmp"
	"slices"
	"strings"
)

// descriptionIntro and descriptionGlobals open the tool's description.
const descriptionIntro = "Run JavaScript that calls the other tools. The input is plain JavaScript (not JSON, no code fence), run as the body of an async function in a QuickJS sandbox, so top-level `await` and `return` work. There is no Node, file system, network or timer API.\n" +
	"- `await tools.<name>({ ...args })` resolves to a string, or to an object where the tool's declaration says so, and rejects with an Error when the call fails. A tool declared to return an object also resolves with it on failure when it gave one: check its fields. Calls still running when the script ends are cancelled.\n" +
	"- An optional first line sets limits: `// @options: {\"max_output_tokens\": 10000, \"timeout_ms\": 60000}`"

const descriptionGlobals = "Globals:\n" +
	"- `text(value)`, `image(dataUrlOrImageBlock)`, `console.log(...)` and a top-level `return` add output; `exit()` ends the script. With several text items each starts with a `==> text N/M <==` line, and `console` lines come after the other output in one `<console_output>` block. `image()` also saves the image to a temp file and the result names its path.\n" +
	"- `store(key, value)` and `load(key)` keep JSON values from one codemode call to the next.\n" +
	"- `ALL_TOOLS`, `await searchTools(query, { limit?, namespace? })`, `await describeTool(name)`, `await describeNamespace(name)`: find tools not listed here, such as MCP tools.\n" +
	"- `await models.list()` lists the chat models gopi knows; gopi runs no classifier or image models."

// section is one listed tool in the description, and its cost.
type section struct {
	name, text string
	cost       int
}

// group is the listed tools of one namespace ("" for none).
type group struct {
	ns      *Namespace
	entries []section
}

// Description is the tool's description: how scripts work, their
// globals, and the listed tools' declarations grouped by namespace,
// within budget estimated tokens (characters / 4). Tools that do not fit
// are left out (scripts find them with searchTools()); 0 lists only the
// namespaces.
func Description(tools []Tool, budget int) string {
	groups := map[string]*group{"": {}}
	for _, t := range tools {
		if t.Unlisted || t.Spec.Name == Name {
			continue
		}
		key := ""
		if t.Namespace != nil {
			key = "ns:" + t.Namespace.Name
		}
		g := groups[key]
		if g == nil {
			g = &group{ns: t.Namespace}
			groups[key] = g
		}
		id := identifier(t.Spec.Name)
		heading := "### `" + id + "`"
		if id != t.Spec.Name {
			heading += " (`" + t.Spec.Name + "`)"
		}
		text := heading + "\n" + strings.TrimSpace(sample(t))
		g.entries = append(g.entries, section{name: t.Spec.Name, text: text, cost: ceilDiv(jsLen(text), charsPerToken)})
	}
	ordered := make([]*group, 0, len(groups))
	for _, g := range groups {
		ordered = append(ordered, g)
	}
	slices.SortFunc(ordered, func(a, b *group) int {
		switch {
		case a.ns == nil && b.ns == nil:
			return 0
		case a.ns == nil:
			return -1
		case b.ns == nil:
			return 1
		}
		return cmp.Compare(a.ns.Name, b.ns.Name)
	})
	shown := pick(ordered, budget)
	out := []string{descriptionIntro, descriptionGlobals}
	listed := 0
	for _, g := range ordered {
		listed += len(g.entries)
	}
	if listed == 0 {
		return strings.Join(out, "\n\n")
	}
	secs := []string{"Nested tools:"}
	for _, g := range ordered {
		var visible []section
		for _, e := range g.entries {
			if shown[e.name] {
				visible = append(visible, e)
			}
		}
		if g.ns != nil {
			note := ""
			switch {
			case len(visible) == 0:
				note = " (tools not listed)"
			case len(visible) < len(g.entries):
				note = " (some tools not listed)"
			}
			h := "## " + g.ns.Name + note
			if d := strings.TrimSpace(g.ns.Description); d != "" {
				h += "\n" + d
			}
			secs = append(secs, h)
		}
		for _, e := range visible {
			secs = append(secs, e.text)
		}
	}
	out = append(out, strings.Join(secs, "\n\n"))
	return strings.Join(out, "\n\n")
}

// pick chooses the sections that fit the budget as pi does: round by
// round, every group (no namespace first, then by name) places its
// cheapest remaining tool; a group whose next tool does not fit stops,
// the others go on. So every namespace is represented before any is
// complete.
func pick(groups []*group, budget int) map[string]bool {
	shown := map[string]bool{}
	queues := make([][]section, 0, len(groups))
	for _, g := range groups {
		q := slices.Clone(g.entries)
		slices.SortStableFunc(q, func(a, b section) int { return cmp.Compare(a.cost, b.cost) })
		if len(q) > 0 {
			queues = append(queues, q)
		}
	}
	remaining := budget
	for len(queues) > 0 {
		next := queues[:0]
		for _, q := range queues {
			if q[0].cost > remaining {
				continue
			}
			remaining -= q[0].cost
			shown[q[0].name] = true
			if q = q[1:]; len(q) > 0 {
				next = append(next, q)
			}
		}
		queues = next
	}
	return shown
}
