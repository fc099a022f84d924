package skills_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/reel-agent/reel/agent/skills"
)

// A project skill in .dsh/skills: the catalog the model is shown, and
// what a user's /pdf-forms enters.
func Example() {
	cwd, err := os.MkdirTemp("", "skills-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(cwd)
	dir := filepath.Join(cwd, ".dsh", "skills", "pdf-forms")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		panic(err)
	}
	skill := "---\nname: pdf-forms\ndescription: Fill in PDF forms.\n---\n\nUse scripts/fill.py.\n"
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skill), 0o644); err != nil {
		panic(err)
	}

	c, problems := skills.Discover(context.Background(), cwd, skills.Options{NoUser: true})
	fmt.Println("problems:", len(problems))
	for _, s := range c.UserVisible() {
		fmt.Printf("/%s — %s\n", s.Name, s.Description)
	}
	if _, ok := c.Message(); ok {
		fmt.Println(string(c.Source(false).AppendJSON(nil)))
	}
	for _, name := range skills.InvokedNames("/pdf-forms please") {
		text, err := c.Load(name)
		fmt.Println(err == nil, len(text) > 0)
	}
	// Output:
	// problems: 0
	// /pdf-forms — Fill in PDF forms.
	// {"kind":"skill-catalog","form":"catalog","entries":[{"name":"pdf-forms","description":"Fill in PDF forms."}]}
	// true true
}
