package harness_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// buildPatched applies patch (a -p1 patch of the module's source) to tree,
// a copy of the module's source, and builds that reel into tree/reel. The
// build runs in root, the module itself, with the patched files laid over
// their originals (go build -overlay): every package the patch does not
// touch has root's paths and contents, so it comes from the build cache
// (TestMain built the same reel), and only the patched packages and those
// importing them compile.
func buildPatched(t *testing.T, root, tree, patch string) string {
	t.Helper()
	apply := exec.Command("patch", "-p1", "-i", patch)
	apply.Dir = tree
	if out, err := apply.CombinedOutput(); err != nil {
		t.Fatalf("apply %s: %v\n%s", patch, err, out)
	}
	files, err := patchedFiles(patch)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s patches no file", patch)
	}
	overlay := map[string]map[string]string{"Replace": {}}
	for _, f := range files {
		overlay["Replace"][filepath.Join(root, f)] = filepath.Join(tree, f)
	}
	b, err := json.Marshal(overlay)
	if err != nil {
		t.Fatal(err)
	}
	overlayFile := filepath.Join(t.TempDir(), "overlay.json")
	if err := os.WriteFile(overlayFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(tree, "reel")
	build := exec.Command("go", "build", "-overlay", overlayFile, stripped, "-o", exe, "./cmd/reel")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the patched reel: %v\n%s", err, out)
	}
	return exe
}

// patchedFiles lists the files a unified diff patches (its "+++ b/..."
// lines), relative to the module root.
func patchedFiles(patch string) ([]string, error) {
	f, err := os.Open(patch)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "+++ b/")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, "\t")
		files = append(files, filepath.FromSlash(name))
	}
	return files, sc.Err()
}
