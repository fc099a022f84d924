package equiv

import (
	"encoding/json"
	"fmt"

	"github.com/reel-agent/reel/sessionlog"
)

// imageFact is what the comparison sees of an image part, in the text of
// the message or result that holds it: the attachment's id (the digest of
// its bytes), media type, dimensions and size. The file name a read_image
// reference may carry is presentation and left out. A run that drops an
// image, or enters other bytes, differs from the recording here.
func imageFact(p sessionlog.Part) (string, bool) {
	if p.Type != sessionlog.PartImage || p.Attachment == nil {
		return "", false
	}
	a := *p.Attachment
	return fmt.Sprintf("[image %s %s %dx%d %d bytes]", a.ID, a.MediaType, a.Width, a.Height, a.Bytes), true
}

var (
	imageEnvelope = &pattern{expr: `^<path>(.*)</path>\n<type>image</type>\n<content>\n(.*)\n</content>`}
	imageFactRe   = &pattern{expr: `\[image sha256:[0-9a-f]{64} [^\]]*\]`}
)

// readImageEssence reduces a read_image result (its envelope, then the
// image part's fact, see decodeResult) to the path, the stated image and
// the attachment. A result without an image part is in no known
// presentation: an image read that enters no image differs.
func readImageEssence(text string, _ json.RawMessage) (Essence, bool) {
	m := imageEnvelope.get().FindStringSubmatch(text)
	imgs := imageFactRe.get().FindAllString(text, -1)
	if m == nil || len(imgs) == 0 {
		return Essence{}, false
	}
	return Essence{Facts: []string{"path " + relPath(m[1]), m[2]}, Items: imgs}, true
}
