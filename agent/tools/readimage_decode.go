package tools

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"

	"golang.org/x/image/webp"
)

// Admission limits of an image (read_image, and images in a prompt), the
// reference's defaults: a larger image is refused before it can enter the
// conversation, where it would ride every later request.
const (
	// MaxImageBytes bounds the encoded size of one image (3.5 MiB).
	MaxImageBytes = 3584 << 10
	// MaxImageSide bounds each side in pixels: the strictest limit the
	// model endpoints enforce (a request carrying a wider image fails).
	MaxImageSide = 2000
	// MaxImagePixels bounds width times height.
	MaxImagePixels = 40_000_000
)

// The media types of the images reel admits.
const (
	MediaPNG  = "image/png"
	MediaJPEG = "image/jpeg"
	MediaWebP = "image/webp"
	MediaGIF  = "image/gif"
)

// Errors of InspectImage, matched with errors.Is.
var (
	// ErrImageInvalid reports bytes that are not a whole PNG, JPEG,
	// WebP or GIF image (an unknown format, a truncated or corrupt file).
	ErrImageInvalid = errors.New("tools: not a valid PNG, JPEG, WebP or GIF image")
	// ErrImageSide reports an image with a side over MaxImageSide.
	ErrImageSide = errors.New("tools: image side over the limit")
	// ErrImagePixels reports an image of more than MaxImagePixels pixels.
	ErrImagePixels = errors.New("tools: image has too many pixels")
	// ErrImageBytes reports an image of more than MaxImageBytes bytes.
	ErrImageBytes = errors.New("tools: image too large")
)

// Image is one image a tool call read, with what InspectImage found.
type Image struct {
	// Data is the encoded image, as read.
	Data []byte
	ImageInfo
	// Name is the base name of the file it came from ("" for none).
	Name string
}

// ImageInfo is what InspectImage finds out about an encoded image.
type ImageInfo struct {
	// MediaType is the format the bytes are in (MediaPNG, …).
	MediaType string
	// Width and Height are its dimensions in pixels.
	Width, Height int
}

// decoder is one admitted format: its magic test and its decoders.
type decoder struct {
	mediaType string
	magic     func([]byte) bool
	config    func(io.Reader) (image.Config, error)
	decode    func(io.Reader) (image.Image, error)
}

// decoders are the admitted formats, tried by their magic bytes.
var decoders = []decoder{
	{MediaPNG, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) }, png.DecodeConfig, png.Decode},
	{MediaJPEG, func(b []byte) bool { return bytes.HasPrefix(b, []byte("\xff\xd8\xff")) }, jpeg.DecodeConfig, jpeg.Decode},
	{MediaGIF, func(b []byte) bool {
		return bytes.HasPrefix(b, []byte("GIF87a")) || bytes.HasPrefix(b, []byte("GIF89a"))
	}, gif.DecodeConfig, gif.Decode},
	{MediaWebP, func(b []byte) bool { return len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" }, webp.DecodeConfig, webp.Decode},
}

// InspectImage checks that data is one admissible image and returns its
// format and dimensions (on an error, as much of them as is known: the
// format once the magic bytes name one). The format comes from the magic bytes; the
// header's dimensions are checked against MaxImageSide and MaxImagePixels
// before any pixel is decoded (so a tiny file declaring a huge image costs
// nothing), and then the whole image is decoded (a GIF: its first frame),
// so a truncated or corrupt file is refused. Memory is bounded by the
// limits: at most MaxImageSide² pixels are ever allocated.
func InspectImage(data []byte) (ImageInfo, error) {
	if len(data) > MaxImageBytes {
		return ImageInfo{}, fmt.Errorf("%w: %d bytes, more than %d", ErrImageBytes, len(data), MaxImageBytes)
	}
	for _, d := range decoders {
		if !d.magic(data) {
			continue
		}
		cfg, err := d.config(bytes.NewReader(data))
		if err != nil {
			return ImageInfo{MediaType: d.mediaType}, fmt.Errorf("%w: %s header: %v", ErrImageInvalid, d.mediaType, err)
		}
		info := ImageInfo{MediaType: d.mediaType, Width: cfg.Width, Height: cfg.Height}
		if cfg.Width <= 0 || cfg.Height <= 0 {
			return info, fmt.Errorf("%w: %s declares %dx%d pixels", ErrImageInvalid, d.mediaType, cfg.Width, cfg.Height)
		}
		if cfg.Width > MaxImageSide || cfg.Height > MaxImageSide {
			return info, fmt.Errorf("%w: %dx%d, more than %d on a side", ErrImageSide, cfg.Width, cfg.Height, MaxImageSide)
		}
		if int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
			return info, fmt.Errorf("%w: %dx%d", ErrImagePixels, cfg.Width, cfg.Height)
		}
		if _, err := d.decode(bytes.NewReader(data)); err != nil {
			return info, fmt.Errorf("%w: %s: %v", ErrImageInvalid, d.mediaType, err)
		}
		return info, nil
	}
	return ImageInfo{}, fmt.Errorf("%w: unknown format", ErrImageInvalid)
}

// ImageMediaType is the media type a file name declares by its extension
// (.png, .jpg, .jpeg, .webp, .gif, any case), "" for none of them.
func ImageMediaType(name string) string {
	ext := ""
	for i := len(name) - 1; i >= 0 && name[i] != '/'; i-- {
		if name[i] == '.' {
			ext = string(bytes.ToLower([]byte(name[i:])))
			break
		}
	}
	switch ext {
	case ".png":
		return MediaPNG
	case ".jpg", ".jpeg":
		return MediaJPEG
	case ".webp":
		return MediaWebP
	case ".gif":
		return MediaGIF
	}
	return ""
}

// AdmittedMediaType reports whether mt is one of the admitted formats.
func AdmittedMediaType(mt string) bool {
	for _, d := range decoders {
		if d.mediaType == mt {
			return true
		}
	}
	return false
}
