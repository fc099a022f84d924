package equiv

import (
	"strings"
	"testing"
)

func TestReadImageEssence(t *testing.T) {
	id := "sha256:" + strings.Repeat("b1", 32)
	env := "<path>{{cwd}}/red.png</path>\n<type>image</type>\n<content>\nimage/png image, 1x1 px, 69 bytes\n</content>"
	fact := "[image " + id + " image/png 1x1 69 bytes]"
	want, ok := readImageEssence(env+fact, nil)
	if !ok || want.Facts[0] != "path red.png" || len(want.Items) != 1 || want.Items[0] != fact {
		t.Fatalf("essence %+v, %v", want, ok)
	}
	other := "[image sha256:" + strings.Repeat("00", 32) + " image/png 1x1 69 bytes]"
	for name, text := range map[string]string{
		"another attachment": env + other,
		"another size":       strings.Replace(env, "69 bytes", "70 bytes", 1) + fact,
		"another file":       strings.Replace(env, "red.png", "blue.png", 1) + fact,
	} {
		got, ok := readImageEssence(text, nil)
		if !ok || got.equal(want) {
			t.Errorf("%s: %+v equals the recording's", name, got)
		}
	}
	if _, ok := readImageEssence(env, nil); ok {
		t.Errorf("a result that carries no image is a known presentation")
	}
}
