package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// The floor of a streamed reply is a client reading the bytes: a "writer"
// agent that answers get_state and then, for the prompt, writes what gopi
// wrote for the same reply in one go, doing nothing else. gopi's time over
// the writer's is what producing the stream costs.

// recordStream runs a once (the reply already pushed to the model) and
// returns what it wrote from the prompt up to and including agent_end.
func (a *agent) recordStream(file string) error {
	p, err := a.started()
	if err != nil {
		return err
	}
	if _, err := io.WriteString(p.in, `{"id":"p","type":"prompt","message":"stream"}`+"\n"); err != nil {
		return err
	}
	// Written as it comes, not held: a child's peak RSS as the kernel
	// reports it is at least this process's size when it was started.
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	out := bufio.NewWriterSize(f, 1<<20)
	for {
		line, err := p.out.ReadSlice('\n')
		if _, werr := out.Write(line); werr != nil {
			return werr
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return fmt.Errorf("recording the stream: %w", err)
		}
		if bytes.Contains(line[:min(len(line), 200)], []byte(`"type":"agent_end"`)) {
			break
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	_, err = p.finish()
	return err
}

// replay is the writer agent (bench-vs-pi -replay FILE): get_state gets a
// minimal answer, a prompt gets FILE's bytes in one write; stdin's end
// ends it.
func replay(file string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	in := bufio.NewReader(os.Stdin)
	for {
		line, err := in.ReadString('\n')
		switch {
		case strings.Contains(line, `"type":"get_state"`):
			if _, err := os.Stdout.WriteString(`{"id":"s","type":"response","command":"get_state","success":true,"data":{}}` + "\n"); err != nil {
				return err
			}
		case strings.Contains(line, `"type":"prompt"`):
			if _, err := os.Stdout.Write(data); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
