package resources

import "errors"

// ErrCollision marks a template or skill left out because an earlier one
// (higher precedence) has the same name.
var ErrCollision = errors.New("name collision")

var (
	// ErrSectionName rejects a system prompt section name an extension
	// cannot use; the error names it.
	ErrSectionName = errors.New("invalid system prompt section name")
	// ErrTrustLocked: another process held the trust file's lock too long;
	// the error names the folder.
	ErrTrustLocked = errors.New("is held by another process")
)

// Why a skill or prompt template was left out.
var (
	errNoSkillPath    = errors.New("skill path does not exist")
	errSkillNotMD     = errors.New("skill path is not a markdown file")
	errNoTemplatePath = errors.New("prompt template path does not exist")
	errDescNotText    = errors.New("skill description must be text")
	errNameNotText    = errors.New("skill name must be text")
)

// LoadError is a problem with one template or skill file (or an explicit
// path). Skipped says whether the resource was left out; otherwise it loaded
// and the error is a warning.
type LoadError struct {
	Path    string
	Err     error
	Skipped bool
}

func (e *LoadError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }
