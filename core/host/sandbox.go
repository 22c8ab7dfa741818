package host

import (
	"fmt"

	"github.com/gopi-dev/gopi/core/api"
	"github.com/gopi-dev/gopi/core/sandbox"
)

// SandboxMode is the sandbox mode asked for (--sandbox, the settings, a
// dialect's default, or the last SetSandbox): off without a sandbox. A
// project's settings may keep a stricter one in force, which get_state
// reports.
func (h *Host) SandboxMode() sandbox.Mode {
	if h.opts.Sandbox == nil {
		return sandbox.Off
	}
	return h.opts.Sandbox.Chosen()
}

// SetSandbox makes the model's commands run in mode from the next tool
// call on, resolved as --sandbox is at start: a project's settings that
// ask for a stricter mode keep it (said through Options.Report). When
// this machine cannot enforce the mode in force, its commands are refused
// (fail closed) and Report says why. A call already running keeps its
// sandbox. Without a sandbox (Options.Sandbox nil) only off is possible.
func (h *Host) SetSandbox(mode sandbox.Mode) error {
	if h.opts.Sandbox == nil {
		if m, err := sandbox.ParseMode(string(mode)); err != nil || m != sandbox.Off {
			return fmt.Errorf("sandbox %q: %w", mode, ErrNoSandbox)
		}
		return nil
	}
	notes, err := h.opts.Sandbox.Set(mode)
	if err != nil {
		return fmt.Errorf("setting the sandbox: %w", err)
	}
	for _, n := range notes {
		h.opts.Report(fmt.Errorf("sandbox %s: %s", mode, n))
	}
	if st := h.opts.Sandbox.State(); st.Problem != "" {
		h.opts.Report(fmt.Errorf("sandbox %s: %s", st.Mode, st.Problem))
	}
	return nil
}

// sandboxState is get_state's "sandbox": nil with the mode off (pi's
// state) or without a sandbox.
func sandboxState(sb Sandbox) *api.SandboxState {
	if sb == nil {
		return nil
	}
	st := sb.State()
	if st.Mode == sandbox.Off {
		return nil
	}
	return &api.SandboxState{Mode: string(st.Mode), Network: st.Network, Layers: st.Layers, Problem: st.Problem}
}
