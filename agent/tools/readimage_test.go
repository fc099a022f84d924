package tools

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// encodeImage encodes a w x h image in format ("png", "jpeg", "gif").
func encodeImage(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngDeclaring is a PNG signature and IHDR (valid CRC) declaring w x h.
func pngDeclaring(w, h uint32) []byte {
	ihdr := []byte("IHDR")
	ihdr = binary.BigEndian.AppendUint32(ihdr, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, ihdr...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(ihdr))
}

// webpLossless1x1 is a 1x1 lossless WebP.
var webpLossless1x1 = []byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0d\x00\x00\x00\x2f\x00\x00\x00\x10\x07\x10\x11\x11\x88\x88\xfe\x07\x00")

func TestInspectImage(t *testing.T) {
	png3x2 := encodeImage(t, "png", 3, 2)
	tests := []struct {
		name string
		data []byte
		want ImageInfo
		err  error
	}{
		{"png", png3x2, ImageInfo{MediaPNG, 3, 2}, nil},
		{"jpeg", encodeImage(t, "jpeg", 5, 4), ImageInfo{MediaJPEG, 5, 4}, nil},
		{"gif", encodeImage(t, "gif", 2, 7), ImageInfo{MediaGIF, 2, 7}, nil},
		{"webp", webpLossless1x1, ImageInfo{MediaWebP, 1, 1}, nil},
		{"side at the limit", encodeImage(t, "png", 2000, 1), ImageInfo{MediaPNG, 2000, 1}, nil},
		{"side over the limit", encodeImage(t, "png", 2001, 1), ImageInfo{MediaPNG, 2001, 1}, ErrImageSide},
		{"huge declared size, no pixels", pngDeclaring(100000, 100000), ImageInfo{MediaPNG, 100000, 100000}, ErrImageSide},
		{"declared size overflowing", pngDeclaring(1<<30, 1<<30), ImageInfo{MediaType: MediaPNG}, ErrImageInvalid},
		{"zero declared size", pngDeclaring(0, 5), ImageInfo{MediaType: MediaPNG}, ErrImageInvalid},
		{"truncated", png3x2[:len(png3x2)-20], ImageInfo{MediaPNG, 3, 2}, ErrImageInvalid},
		{"header only", png3x2[:20], ImageInfo{MediaType: MediaPNG}, ErrImageInvalid},
		{"not an image", []byte("hello, world"), ImageInfo{}, ErrImageInvalid},
		{"empty", nil, ImageInfo{}, ErrImageInvalid},
		{"svg", []byte("<svg xmlns='http://www.w3.org/2000/svg'/>"), ImageInfo{}, ErrImageInvalid},
		{"too many bytes", append(bytes.Clone(png3x2), make([]byte, MaxImageBytes)...), ImageInfo{}, ErrImageBytes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := InspectImage(tc.data)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("info = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestReadImage(t *testing.T) {
	ws := t.TempDir()
	put := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put("ok.PNG", encodeImage(t, "png", 3, 2))
	put("wide.png", encodeImage(t, "png", 2001, 1))
	put("huge.png", pngDeclaring(100000, 100000))
	put("photo.png", encodeImage(t, "jpeg", 2, 2))
	put("text.gif", []byte("plain text"))
	put("big.jpg", make([]byte, MaxImageBytes+1))
	if err := syscall.Mkfifo(filepath.Join(ws, "fifo.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(ws, "zero.png")); err != nil {
		t.Fatal(err)
	}
	abs := func(n string) string { return filepath.Join(ws, n) }
	tests := []struct {
		name, path string
		textOnly   bool
		want       string // the result text (prefix), or the envelope
		image      bool
	}{
		{"png", "ok.PNG", false, "<path>" + abs("ok.PNG") + "</path>\n<type>image</type>\n<content>\nimage/png image, 3x2 px, ", true},
		{"text-only model", "ok.PNG", true, `Error: cannot read "ok.PNG" as an image: model "m1" does not declare image input; switch to an image-capable model to read images`, false},
		{"text-only model, missing file", "nope.png", true, `Error: cannot read "nope.png" as an image: model "m1"`, false},
		{"not an image path", "notes.txt", false, `Error: cannot read "notes.txt": read_image only accepts PNG/JPEG/WebP/GIF paths`, false},
		{"empty path", " ", false, "Error: file_path must be a non-empty string", false},
		{"too wide", "wide.png", false, `Error: cannot read "` + abs("wide.png") + `": at least one image side exceeds the 2000px limit; downscale the image and read the smaller copy`, false},
		{"huge declared", "huge.png", false, `Error: cannot read "` + abs("huge.png") + `": at least one image side exceeds the 2000px limit`, false},
		{"format mismatch", "photo.png", false, `Error: cannot read "` + abs("photo.png") + `": the .png extension declares image/png, but the bytes use a different image format`, false},
		{"not image bytes", "text.gif", false, `Error: cannot read "` + abs("text.gif") + `": the .gif extension declares image/gif, but the bytes are not a PNG/JPEG/WebP/GIF image`, false},
		{"too many bytes", "big.jpg", false, `Error: cannot read "` + abs("big.jpg") + `": the file is larger than the 3670016-byte image limit`, false},
		{"fifo", "fifo.png", false, `Error: cannot read "` + abs("fifo.png") + `": not a regular file`, false},
		{"device link", "zero.png", false, `Error: cannot read "` + abs("zero.png") + `": not a regular file`, false},
		{"missing", "nope.png", false, `Error: cannot read "` + abs("nope.png") + `": no such file`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{Cwd: ws, ImageInput: !tc.textOnly, ImageModel: "m1"}
			args := []byte(`{"file_path":` + string(jsonString(tc.path)) + `}`)
			res, err := ReadImage{}.Run(context.Background(), env, args)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(res.Text, tc.want) {
				t.Errorf("text\n %q\nwant prefix\n %q", res.Text, tc.want)
			}
			if res.IsError == tc.image || (len(res.Images) == 1) != tc.image {
				t.Errorf("IsError %v with %d images, want an image: %v", res.IsError, len(res.Images), tc.image)
			}
			if tc.image && (res.Images[0].Name != filepath.Base(tc.path) || res.Images[0].Width != 3) {
				t.Errorf("image %+v", res.Images[0].ImageInfo)
			}
		})
	}
	if _, err := (ReadImage{}).Run(context.Background(), &Env{Cwd: ws}, []byte(`{"file_path":"a.png","offset":1}`)); !errors.Is(err, ErrInvalidArgs) {
		t.Errorf("an unknown argument: %v, want ErrInvalidArgs", err)
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) []byte {
	b := []byte{'"'}
	b = append(b, strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)...)
	return append(b, '"')
}

// FuzzInspectImage: no input makes InspectImage panic, allocate beyond its
// limits or admit an image outside them; an admitted image has a known
// type and its dimensions within the limits.
func FuzzInspectImage(f *testing.F) {
	f.Add(encodeImage(f, "png", 3, 2))
	f.Add(encodeImage(f, "jpeg", 4, 4))
	f.Add(encodeImage(f, "gif", 2, 2))
	f.Add(webpLossless1x1)
	f.Add(pngDeclaring(100000, 3))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := InspectImage(data)
		if err != nil {
			return
		}
		if !AdmittedMediaType(info.MediaType) || info.Width < 1 || info.Height < 1 || info.Width > MaxImageSide || info.Height > MaxImageSide {
			t.Fatalf("admitted %+v", info)
		}
	})
}
