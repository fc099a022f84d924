package mcp

import (
	"strings"
	"testing"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("t", 100)
	for _, tt := range []struct {
		server, tool, want string
	}{
		{"fs", "read_file", "mcp__fs__read_file"},
		{"my-server", "Tool-2", "mcp__my-server__Tool-2"},
		{"a.b", "c d", "mcp__a_b__c_d"},
		{"srv", "../../x", "mcp__srv________x"},
		{"ü", "日本", "mcp_____________"[:len("mcp__")+1] + "__" + "__"},
		{"s", "", "mcp__s___"},
		{"s", "x\x00y", "mcp__s__x_y"},
		{"s", long, "mcp__s__" + strings.Repeat("t", 55-len("mcp__s__")) + "_" + nameHash("s", long, 0)},
	} {
		got := ToolName(tt.server, tt.tool)
		if got != tt.want {
			t.Errorf("ToolName(%q, %.20q) = %q, want %q", tt.server, tt.tool, got, tt.want)
		}
		if !ValidName(got) {
			t.Errorf("ToolName(%q, %.20q) = %q is not valid", tt.server, tt.tool, got)
		}
	}
}

func TestNamerResolvesCollisions(t *testing.T) {
	var n namer
	type assigned struct{ name, reason string }
	got := func(server, tool string) assigned {
		name, reason := n.assign(server, tool)
		return assigned{name, reason}
	}
	first := got("s", "a.b")
	second := got("s", "a_b")
	third := got("s", "a b")
	if first != (assigned{"mcp__s__a_b", "sanitized"}) {
		t.Errorf("first = %+v", first)
	}
	if second != (assigned{"mcp__s__a_b_" + nameHash("s", "a_b", 0), "collision"}) {
		t.Errorf("second = %+v", second)
	}
	if third != (assigned{"mcp__s__a_b_" + nameHash("s", "a b", 0), "collision"}) {
		t.Errorf("third = %+v", third)
	}
	// A shortened name that is taken moves on to the next hash.
	long := strings.Repeat("x", 80)
	a := got("s", long)
	b := got("s", long)
	if a.reason != "shortened" || b.reason != "collision" || a.name == b.name || !ValidName(b.name) {
		t.Errorf("long names %+v %+v", a, b)
	}
	// The same requests in the same order give the same names.
	var m namer
	for i, c := range [][2]string{{"s", "a.b"}, {"s", "a_b"}, {"s", "a b"}, {"s", long}, {"s", long}} {
		name, reason := m.assign(c[0], c[1])
		if want := []assigned{first, second, third, a, b}[i]; (assigned{name, reason}) != want {
			t.Errorf("again %q: %q %q, want %+v", c[1], name, reason, want)
		}
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"mcp__a__b":             true,
		"":                      false,
		"a.b":                   false,
		"é":                     false,
		strings.Repeat("a", 64): true,
		strings.Repeat("a", 65): false,
	} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %v", name, !want)
		}
	}
}

// FuzzToolName checks that every pair of names gives a valid, stable tool
// name, and that a namer never hands out one name twice.
func FuzzToolName(f *testing.F) {
	f.Add("fs", "read_file")
	f.Add("bad server/..", "../../x")
	f.Add("ü", "日本語のツール")
	f.Add("s", strings.Repeat("a", 300))
	f.Add("", "")
	f.Add("a__b", "c")
	f.Fuzz(func(t *testing.T, server, tool string) {
		name := ToolName(server, tool)
		if !ValidName(name) || !strings.HasPrefix(name, NamePrefix) {
			t.Fatalf("ToolName(%q, %q) = %q", server, tool, name)
		}
		if ToolName(server, tool) != name {
			t.Fatal("ToolName is not deterministic")
		}
		var n namer
		seen := map[string]bool{}
		for _, pair := range [][2]string{{server, tool}, {server, tool}, {server + ".", tool}, {server + "_", tool}, {server, tool + "\x00"}} {
			got, _ := n.assign(pair[0], pair[1])
			if !ValidName(got) || seen[got] {
				t.Fatalf("assign(%q, %q) = %q (valid %v, seen %v)", pair[0], pair[1], got, ValidName(got), seen[got])
			}
			seen[got] = true
		}
	})
}
