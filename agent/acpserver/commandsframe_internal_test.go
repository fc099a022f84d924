package acpserver

import (
	"bytes"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestCommandsFrameBytes holds the hand-written available_commands_update
// frame to the bytes encoding/json writes through the SDK's types for the
// same update (escaping, invalid UTF-8, one command or many), and checks
// that every other update, and commands it does not write (with input or
// _meta, or none at all), are declined.
func TestCommandsFrameBytes(t *testing.T) {
	cmds := func(names ...string) acp.SessionUpdate {
		var list []acp.AvailableCommand
		for _, n := range names {
			list = append(list, acp.AvailableCommand{Name: n, Description: "runs " + n + ` <&> "quoted" \ ` + "\u2028\xff\t"})
		}
		return acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{AvailableCommands: list}}
	}
	input := cmds("a", "b")
	input.AvailableCommandsUpdate.AvailableCommands[1].Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "N"}}
	meta := cmds("a")
	meta.AvailableCommandsUpdate.AvailableCommands[0].Meta = map[string]any{"k": "v"}
	updateMeta := cmds("a")
	updateMeta.AvailableCommandsUpdate.Meta = map[string]any{"k": "v"}
	both := cmds("a")
	both.CurrentModeUpdate = &acp.SessionCurrentModeUpdate{CurrentModeId: "read-only"}
	cases := []struct {
		name    string
		session string
		u       acp.SessionUpdate
		fast    bool
	}{
		{"one", "s1", cmds("compact"), true},
		{"many", "97994ff6-f572-40d2-aeda-ad330f9a3fa5", cmds("compact", "undo", "rewind", "checkpoints", "skill:x"), true},
		{"odd session id", `<s>"&` + "\xfe", cmds("compact"), true},
		{"empty name", "s", cmds(""), true},
		{"none", "s", acp.SessionUpdate{AvailableCommandsUpdate: &acp.SessionAvailableCommandsUpdate{}}, false},
		{"input", "s", input, false},
		{"command meta", "s", meta, false},
		{"update meta", "s", updateMeta, false},
		{"two variants", "s", both, false},
		{"mode", "s", acp.SessionUpdate{CurrentModeUpdate: &acp.SessionCurrentModeUpdate{CurrentModeId: "read-only"}}, false},
	}
	for _, c := range cases {
		got, ok := commandsFrame(c.session, c.u)
		if ok != c.fast {
			t.Errorf("%s: written by hand = %v, want %v", c.name, ok, c.fast)
			continue
		}
		if !ok {
			continue
		}
		want, err := notificationFrame(acp.ClientMethodSessionUpdate, acp.SessionNotification{SessionId: acp.SessionId(c.session), Update: c.u})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: hand-written frame differs:\n got %s\nwant %s", c.name, got, want)
		}
	}
}
