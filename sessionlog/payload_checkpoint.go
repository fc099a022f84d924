package sessionlog

import "strconv"

// TypeWorkspaceCheckpoint is reel's record of the workspace checkpoints and
// rewinds of a session (agent/checkpoint). It is log-only (no surface op)
// and unknown to dsh, whose readers keep it verbatim; the rewind's surface
// change is an ordinary user/message with a replace op (source kind
// SourceRewind).
const TypeWorkspaceCheckpoint = "workspace/checkpoint"

// SourceRewind is the source kind of the note that takes rewound turns off
// the surface.
const SourceRewind = "rewind"

// The kinds of a workspace/checkpoint record.
const (
	// CheckpointCapture: the workspace before the turn's first tool call
	// (Tree, Files, Bytes; Left the files left out for their size).
	CheckpointCapture = "capture"
	// CheckpointSkipped: no capture for the turn (Note says why).
	CheckpointSkipped = "skipped"
	// CheckpointAfter: the workspace when the turn ended (Tree).
	CheckpointAfter = "after"
	// CheckpointRestore: a restore begins: Turn is the turn rewound to,
	// Tree its checkpoint, Paths the files it will change, Journal the
	// restore's journal, Forced whether the user's changes are overridden.
	CheckpointRestore = "restore"
	// CheckpointRestored: the restore ended; Paths are the files changed
	// (Note the error when it failed half way).
	CheckpointRestored = "restored"
)

// CheckpointData is the data of workspace/checkpoint.
type CheckpointData struct {
	Kind    string   `json:"kind"`
	Turn    int      `json:"turn"`
	Tree    string   `json:"tree,omitempty"`
	Files   int      `json:"files,omitempty"`
	Bytes   int64    `json:"bytes,omitempty"`
	Left    []string `json:"left,omitempty"`
	Paths   []string `json:"paths,omitempty"`
	Forced  bool     `json:"forced,omitempty"`
	Journal string   `json:"journal,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// AppendJSON appends {"kind","turn", then each non-empty member in the
// order of the struct}.
func (d CheckpointData) AppendJSON(b []byte) []byte {
	b = append(b, `{"kind":`...)
	b = AppendString(b, d.Kind)
	b = append(b, `,"turn":`...)
	b = strconv.AppendInt(b, int64(d.Turn), 10)
	if d.Tree != "" {
		b = append(b, `,"tree":`...)
		b = AppendString(b, d.Tree)
	}
	if d.Files != 0 {
		b = append(b, `,"files":`...)
		b = strconv.AppendInt(b, int64(d.Files), 10)
	}
	if d.Bytes != 0 {
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, d.Bytes, 10)
	}
	for _, m := range [...]struct {
		key string
		v   []string
	}{{`,"left":`, d.Left}, {`,"paths":`, d.Paths}} {
		if len(m.v) == 0 {
			continue
		}
		b = append(b, m.key...)
		b = append(b, '[')
		for i, s := range m.v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, s)
		}
		b = append(b, ']')
	}
	if d.Forced {
		b = append(b, `,"forced":true`...)
	}
	if d.Journal != "" {
		b = append(b, `,"journal":`...)
		b = AppendString(b, d.Journal)
	}
	if d.Note != "" {
		b = append(b, `,"note":`...)
		b = AppendString(b, d.Note)
	}
	return append(b, '}')
}
