package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// placer changes the files under one folder, the restore's, through an
// [os.Root]: no name it is given and no link it meets takes it outside
// that folder, even if the files change while it works. It never follows
// a link on its own either: one that lies where a file or folder must go
// is removed as a link, whatever it points to.
type placer struct {
	root *os.Root
	// inTheWay decides about a file or link found where a folder must be
	// made, or inside a folder where a file must be put, that the
	// restore's own changes did not remove: nil lets the placer remove
	// it (the caller has kept it for the undo), an error leaves it.
	inTheWay func(p string, info fs.FileInfo) error
	// dirMode is the mode of a folder the placer makes.
	dirMode func(p string) fs.FileMode
	// made are the folders the placer made, each with the bits it must
	// have: until settle gives them those, they are the user's alone
	// and writable, so a folder recorded read-only can be filled.
	made map[string]fs.FileMode
}

// entry is what a restore puts at a path: a file or a link.
type entry struct {
	path string // relative to the placer's folder, slash-separated
	link bool
	perm fs.FileMode // a file's
	// data is the file's bytes or the link's target.
	data func() ([]byte, error)
}

func openPlacer(dir string) (*placer, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return &placer{root: root, inTheWay: func(string, fs.FileInfo) error { return errNotRecorded }, dirMode: func(string) fs.FileMode { return 0o755 }}, nil
}

func (pl *placer) Close() error { return pl.root.Close() }

func osName(p string) string { return filepath.FromSlash(p) }

// parent is p's folder, "." at the top.
func parent(p string) string { return path.Dir(p) }

// lstat is what is at p, nil when nothing is. When one of p's folders is
// not a real folder (a link, a file), nothing is at p as a checkpoint
// means it: that folder is returned as blocked.
func (pl *placer) lstat(p string) (info fs.FileInfo, blocked string, err error) {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		dir := p[:i]
		info, err := pl.root.Lstat(osName(dir))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", err
		}
		if !info.IsDir() {
			return nil, dir, nil
		}
	}
	info, err = pl.root.Lstat(osName(p))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	return info, "", err
}

// remove removes what is at p: a file or a link (never what it points
// to), or a folder through clearDir. Nothing when p is not there.
func (pl *placer) remove(p string) error {
	info, blocked, err := pl.lstat(p)
	if err != nil || info == nil || blocked != "" {
		return err
	}
	if info.IsDir() {
		return pl.clearDir(p)
	}
	if err := pl.root.Remove(osName(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// clearDir removes the folder p, the folders in it, and the files and
// links in it that inTheWay lets go; anything it keeps keeps p.
func (pl *placer) clearDir(p string) error {
	f, err := pl.root.Open(osName(p))
	if err != nil {
		return err
	}
	names, err := f.Readdirnames(-1)
	_ = f.Close()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		c := p + "/" + name
		info, err := pl.root.Lstat(osName(c))
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		case info.IsDir():
			errs = append(errs, pl.clearDir(c))
		default:
			if err := pl.inTheWay(c, info); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", c, err))
			} else if err := pl.root.Remove(osName(c)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return pl.root.Remove(osName(p))
}

// pruneEmpty removes dir and its parents while they are empty folders,
// up to the placer's folder, and except those keep names.
func (pl *placer) pruneEmpty(dir string, keep map[string]bool) {
	for ; dir != "." && !keep[dir]; dir = parent(dir) {
		info, blocked, err := pl.lstat(dir)
		if err != nil || info == nil || blocked != "" || !info.IsDir() {
			return
		}
		if pl.root.Remove(osName(dir)) != nil {
			return // not empty
		}
	}
}

// makeDirs makes p's folders real folders: something else where one
// must be (a link, a file) is removed when inTheWay lets it go, and the
// missing ones are made with dirMode's bits.
func (pl *placer) makeDirs(p string) error {
	for i := 0; i < len(p); i++ {
		if p[i] != '/' {
			continue
		}
		dir := p[:i]
		info, err := pl.root.Lstat(osName(dir))
		switch {
		case err == nil && info.IsDir():
			continue
		case err == nil:
			if err := pl.inTheWay(dir, info); err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
			if err := pl.root.Remove(osName(dir)); err != nil {
				return err
			}
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if err := pl.root.Mkdir(osName(dir), 0o700); err != nil {
			return err
		}
		if pl.made == nil {
			pl.made = map[string]fs.FileMode{}
		}
		pl.made[dir] = pl.dirMode(dir)
	}
	return nil
}

// settle gives the folders the placer made their bits, once the files
// are in them (past the umask, and never before: a folder recorded
// read-only is filled first).
func (pl *placer) settle() error {
	var errs []error
	for dir, perm := range pl.made {
		if err := pl.root.Chmod(osName(dir), perm); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("setting the bits of %s: %w", dir, err))
		}
	}
	clear(pl.made)
	return errors.Join(errs...)
}

// put makes e.path hold e. A file or link there now is replaced by a
// rename over it, so a link is replaced, never written through, once
// inTheWay lets it go; a folder there is cleared first.
func (pl *placer) put(e entry) error {
	if err := pl.makeDirs(e.path); err != nil {
		return err
	}
	info, err := pl.root.Lstat(osName(e.path))
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case info.IsDir():
		if err := pl.clearDir(e.path); err != nil {
			return err
		}
	default:
		if err := pl.inTheWay(e.path, info); err != nil {
			return err
		}
	}
	data, err := e.data()
	if err != nil {
		return err
	}
	tmp, err := tempName(e.path)
	if err != nil {
		return err
	}
	if e.link {
		err = pl.root.Symlink(string(data), osName(tmp))
	} else {
		err = pl.writeNew(tmp, data, e.perm)
	}
	if err == nil {
		err = pl.root.Rename(osName(tmp), osName(e.path))
	}
	if err != nil {
		_ = pl.root.Remove(osName(tmp))
	}
	return err
}

// writeNew creates the file p, which must not exist, with data and
// exactly the bits perm. It is private until then.
func (pl *placer) writeNew(p string, data []byte, perm fs.FileMode) error {
	f, err := pl.root.OpenFile(osName(p), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// tempName is a name beside p that nothing has.
func tempName(p string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := ".gopi-restore-" + hex.EncodeToString(b[:])
	if dir := parent(p); dir != "." {
		return dir + "/" + name, nil
	}
	return name, nil
}

// boundedDirMode is the mode of a folder whose recorded bits are unknown:
// 0755, but never more open than the folder it is made in.
func (pl *placer) boundedDirMode(p string) fs.FileMode {
	if perm, ok := pl.made[parent(p)]; ok {
		return perm & 0o755 // not its bits yet: those it will have
	}
	info, err := pl.root.Lstat(osName(parent(p)))
	if err != nil {
		return 0o700
	}
	return info.Mode().Perm() & 0o755
}

// ancestors are the folders above each of paths, up to the top.
func ancestors(paths []string) map[string]bool {
	out := map[string]bool{}
	for _, p := range paths {
		for dir := parent(p); dir != "." && !out[dir]; dir = parent(dir) {
			out[dir] = true
		}
	}
	return out
}
