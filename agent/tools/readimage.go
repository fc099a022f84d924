package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// ReadImageArgs are the arguments of the read_image tool.
type ReadImageArgs struct {
	// FilePath is the image file, relative to the cwd or absolute.
	FilePath string `json:"file_path"`
}

// ParseReadImageArgs decodes the read_image tool's arguments.
func ParseReadImageArgs(raw json.RawMessage) (ReadImageArgs, error) {
	var a ReadImageArgs
	o, err := decodeArgs("read_image", raw)
	if err != nil {
		return a, err
	}
	a.FilePath, err = o.str("file_path", true)
	return a, err
}

// ReadImage is the read_image tool: it reads a PNG, JPEG, WebP or GIF file
// and puts the image itself in front of the model (the result's Images),
// when the session's model takes images (Env.ImageInput).
type ReadImage struct{}

var _ Tool = ReadImage{}

// Name returns "read_image".
func (ReadImage) Name() string { return "read_image" }

// Schema returns the read_image tool's schema.
func (ReadImage) Schema() Schema {
	return Schema{
		Name: "read_image",
		Description: "Read a PNG/JPEG/WebP/GIF file and return the image itself. Requires the current model to accept image input. " +
			"Images over 2000 pixels on a side or 3.5 MiB are refused: downscale them first. Relative paths resolve against the working directory.",
		Parameters: compactJSON(`{
			"type": "object",
			"properties": {
				"file_path": {"type": "string", "description": "Path of the image file, absolute or relative to the working directory."}
			},
			"required": ["file_path"]
		}`),
	}
}

// describeReadImage returns the title and locations of a read_image call.
func describeReadImage(a ReadImageArgs, resolve func(string) string) (string, []Location) {
	return "Read image " + a.FilePath, []Location{{Path: resolve(a.FilePath)}}
}

// Run reads the image. The gates come first, in the reference's order,
// before any file is touched: a path whose extension names no image
// format, then a model that takes no images (that refusal names the path
// as the model gave it). The file is then read like read reads one (a
// regular file only, opened without blocking, nothing of procfs or sysfs,
// at most MaxImageBytes), and InspectImage admits it. A refusal is an
// error result naming the absolute path; no image enters the
// conversation.
func (ReadImage) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	a, err := ParseReadImageArgs(raw)
	if err != nil {
		return Result{}, err
	}
	if err := env.check(); err != nil {
		return Result{}, err
	}
	title, locs := describeReadImage(a, env.abs)
	fail := func(format string, args ...any) (Result, error) {
		return errorResult(title, KindRead, locs, "Error: "+fmt.Sprintf(format, args...)), nil
	}
	if strings.TrimSpace(a.FilePath) == "" {
		return fail("file_path must be a non-empty string")
	}
	declared := ImageMediaType(a.FilePath)
	if declared == "" {
		return fail("cannot read %q: read_image only accepts PNG/JPEG/WebP/GIF paths", a.FilePath)
	}
	if !env.ImageInput {
		return fail("cannot read %q as an image: model %q does not declare image input; switch to an image-capable model to read images", a.FilePath, env.ImageModel)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	p := locs[0].Path
	data, _, err := ReadRegularFile(p, MaxImageBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("cannot read %q: no such file", p)
	case errors.Is(err, ErrNotRegular):
		return fail("cannot read %q: not a regular file (read_image reads image files only, never FIFOs, devices, directories or /proc and /sys)", p)
	case errors.Is(err, ErrTooLarge):
		return fail("cannot read %q: the file is larger than the %d-byte image limit; downscale the image and read the smaller copy", p, MaxImageBytes)
	case err != nil:
		return fail("cannot read %q: %v", p, unwrapPathError(err))
	}
	info, err := InspectImage(data)
	switch {
	case info.MediaType != "" && info.MediaType != declared:
		return fail("cannot read %q: the %s extension declares %s, but the bytes use a different image format; rename the file to match its actual format if it is PNG/JPEG/WebP/GIF, or convert it to one of those formats", p, strings.ToLower(filepath.Ext(p)), declared)
	case errors.Is(err, ErrImageSide):
		return fail("cannot read %q: at least one image side exceeds the %dpx limit; downscale the image and read the smaller copy", p, MaxImageSide)
	case errors.Is(err, ErrImagePixels):
		return fail("cannot read %q: the image exceeds the %d-pixel decoded-size limit; downscale the image and read the smaller copy", p, MaxImagePixels)
	case err != nil && info.MediaType == "":
		return fail("cannot read %q: the %s extension declares %s, but the bytes are not a PNG/JPEG/WebP/GIF image; convert the file to one of those formats", p, strings.ToLower(filepath.Ext(p)), declared)
	case err != nil:
		return fail("cannot read %q: the file is not a whole %s image (truncated or corrupt)", p, info.MediaType)
	}
	img := Image{Data: data, ImageInfo: info, Name: filepath.Base(p)}
	return Result{
		Text:      ImageEnvelope(p, info, len(data)),
		Kind:      KindRead,
		Title:     title,
		Locations: locs,
		Images:    []Image{img},
	}, nil
}

// ImageEnvelope is the text of a read_image result beside its image, as the
// reference words it.
func ImageEnvelope(path string, info ImageInfo, size int) string {
	return fmt.Sprintf("<path>%s</path>\n<type>image</type>\n<content>\n%s image, %dx%d px, %d bytes\n</content>",
		path, info.MediaType, info.Width, info.Height, size)
}
