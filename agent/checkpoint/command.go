package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/reel-agent/reel/sessionlog"
)

// The checkpoint slash commands.
const (
	UndoCommand        = "/undo"
	RewindCommand      = "/rewind"
	CheckpointsCommand = "/checkpoints"
)

// Request is a checkpoint command: a rewind to before Turn (0: the last
// turn, /undo), listing only the files (DryRun), or overwriting the files
// the user changed since (Force); or List, the checkpoints (/checkpoints).
type Request struct {
	Turn          int
	DryRun, Force bool
	List          bool
}

// ParseCommand reads a checkpoint slash command from a prompt's text; ok
// is false for any other text, err names what is wrong with a checkpoint
// command that cannot be run.
func ParseCommand(text string) (req Request, ok bool, err error) {
	f := strings.Fields(text)
	if len(f) == 0 {
		return req, false, nil
	}
	switch f[0] {
	case CheckpointsCommand:
		return Request{List: true}, true, nil
	case UndoCommand:
		f = f[1:]
	case RewindCommand:
		if len(f) < 2 {
			return req, true, errors.New("usage: /rewind N [dry-run] [force] (N is a turn number from /checkpoints)")
		}
		n, perr := strconv.Atoi(f[1])
		if perr != nil || n < 1 {
			return req, true, fmt.Errorf("usage: /rewind N [dry-run] [force]: %q is not a turn number", f[1])
		}
		req.Turn, f = n, f[2:]
	default:
		return req, false, nil
	}
	for _, w := range f {
		switch w {
		case "force":
			req.Force = true
		case "dry-run":
			req.DryRun = true
		default:
			return req, true, fmt.Errorf("unknown word %q (use dry-run or force)", w)
		}
	}
	return req, true, nil
}

// StoreName is the file name of session id's store: the id itself when it
// is a plain name (a letter or digit, then up to 127 letters, digits, '.',
// '_' or '-'), else a hash of it.
func StoreName(id string) string {
	plain := id != "" && len(id) <= 128
	for i := 0; plain && i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		plain = alnum || i > 0 && (c == '.' || c == '_' || c == '-')
	}
	if plain {
		return id + ".git"
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16]) + ".git"
}

// Listing is the text of /checkpoints from a session's workspace/checkpoint
// records, in log order.
func Listing(recs []sessionlog.CheckpointData) string {
	var b strings.Builder
	for _, d := range recs {
		switch d.Kind {
		case sessionlog.CheckpointCapture:
			fmt.Fprintf(&b, "- turn %d: checkpoint %.12s (%d files, %d bytes)", d.Turn, d.Tree, d.Files, d.Bytes)
			if len(d.Left) > 0 {
				fmt.Fprintf(&b, "; left out for their size: %s", strings.Join(d.Left, ", "))
			}
			b.WriteString("\n")
		case sessionlog.CheckpointSkipped:
			fmt.Fprintf(&b, "- turn %d: no checkpoint (%s)\n", d.Turn, d.Note)
		case sessionlog.CheckpointRestored:
			fmt.Fprintf(&b, "- rewound to before turn %d (%d files restored)\n", d.Turn, len(d.Paths))
		}
	}
	if b.Len() == 0 {
		return "No checkpoints yet: none of this session's turns could change files."
	}
	return "Checkpoints (/rewind N restores the files as they were before turn N):\n" + b.String()
}
