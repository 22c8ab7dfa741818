package checkpoint

import (
	"bufio"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// A git tree keeps only whether a file is executable (100644 or 100755).
// The rest of its permission bits, and those of its folders, are kept in
// the checkpoint's commit message, so a private file comes back private:
// the bits most files of each kind have, then every path whose bits
// differ from its kind's, one a line. In most projects that is three
// numbers and a few lines (.env files, keys), whatever the project's
// size. For example:
//
//	gopi-perms: file 644 exec 755 dir 755
//	gopi-perm: 600 ".env.local"
//	gopi-perm: 0 "key.pem"
const (
	permsKey = "gopi-perms: "
	permKey  = "gopi-perm: "
)

// permTable is the permission bits a snapshot recorded.
type permTable struct {
	file, exec, dir fs.FileMode
	// except are the paths (relative to the top: files and folders,
	// which never share a path) whose bits are not their kind's.
	except map[string]fs.FileMode
}

// buildPerms is the table of a snapshot's files and folders.
func buildPerms(files map[string]fileEntry, dirs map[string]fs.FileMode) *permTable {
	fileN, execN, dirN := map[fs.FileMode]int{}, map[fs.FileMode]int{}, map[fs.FileMode]int{}
	for _, e := range files {
		switch e.mode {
		case modeFile:
			fileN[e.perm]++
		case modeExec:
			execN[e.perm]++
		}
	}
	for _, perm := range dirs {
		dirN[perm]++
	}
	t := &permTable{file: commonest(fileN, 0o644), exec: commonest(execN, 0o755), dir: commonest(dirN, 0o755), except: map[string]fs.FileMode{}}
	for p, e := range files {
		if e.mode != modeSymlink && e.perm != t.kind(e.mode) {
			t.except[p] = e.perm
		}
	}
	for p, perm := range dirs {
		if perm != t.dir {
			t.except[p] = perm
		}
	}
	return t
}

// commonest is the bits most often counted, the narrower on a tie; def
// when none were.
func commonest(n map[fs.FileMode]int, def fs.FileMode) fs.FileMode {
	best, bestN := def, 0
	for perm, c := range n {
		if c > bestN || c == bestN && perm < best {
			best, bestN = perm, c
		}
	}
	return best
}

// kind is the bits most files of a git mode have.
func (t *permTable) kind(mode string) fs.FileMode {
	if mode == modeExec {
		return t.exec
	}
	return t.file
}

// fileMode is the bits of the file at p with git mode mode.
func (t *permTable) fileMode(p, mode string) fs.FileMode {
	if perm, ok := t.except[p]; ok {
		return perm
	}
	return t.kind(mode)
}

// dirMode is the bits of the folder at p.
func (t *permTable) dirMode(p string) fs.FileMode {
	if perm, ok := t.except[p]; ok {
		return perm
	}
	return t.dir
}

// message is the commit message for a snapshot: subject, then the
// table. Paths are quoted as Go strings: any byte a path holds, a
// newline included, stays on its line and comes back as it was.
func (t *permTable) message(subject string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n%sfile %o exec %o dir %o\n", subject, permsKey, t.file, t.exec, t.dir)
	for _, p := range slices.Sorted(maps.Keys(t.except)) {
		fmt.Fprintf(&b, "%s%o %s\n", permKey, t.except[p], strconv.Quote(p))
	}
	return b.String()
}

// parsePerms reads the table from a commit object (`git cat-file commit`
// output); nil when it has none (a checkpoint made before gopi recorded
// them).
func parsePerms(commit []byte) (*permTable, error) {
	_, msg, _ := strings.Cut(string(commit), "\n\n") // the headers end at the first blank line
	var t *permTable
	sc := bufio.NewScanner(strings.NewReader(msg))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, permsKey):
			var file, exec, dir uint32
			if _, err := fmt.Sscanf(line[len(permsKey):], "file %o exec %o dir %o", &file, &exec, &dir); err != nil {
				return nil, fmt.Errorf("checkpoint: its permissions line %q: %w", line, err)
			}
			t = &permTable{file: fs.FileMode(file) & fs.ModePerm, exec: fs.FileMode(exec) & fs.ModePerm, dir: fs.FileMode(dir) & fs.ModePerm, except: map[string]fs.FileMode{}}
		case strings.HasPrefix(line, permKey) && t != nil:
			bits, quoted, ok := strings.Cut(line[len(permKey):], " ")
			perm, err := strconv.ParseUint(bits, 8, 32)
			p, qerr := strconv.Unquote(quoted)
			if !ok || err != nil || qerr != nil {
				return nil, fmt.Errorf("checkpoint: its permissions line %q is not understood", line)
			}
			t.except[p] = fs.FileMode(perm) & fs.ModePerm
		}
	}
	return t, sc.Err()
}

// narrowed is the mode of a file whose recorded bits are unknown (a
// checkpoint made before gopi recorded them) but which exists now with
// cur: its read and write bits are kept, never widened, and only the
// executable bit follows the checkpoint's git mode.
func narrowed(cur fs.FileMode, mode string) fs.FileMode {
	cur &= fs.ModePerm
	if mode == modeExec {
		return cur | (cur&0o444)>>2
	}
	return cur &^ 0o111
}

// private is the mode of a file that comes back with no recorded bits
// and nothing to go by: readable by the user alone.
func private(mode string) fs.FileMode {
	if mode == modeExec {
		return 0o700
	}
	return 0o600
}
