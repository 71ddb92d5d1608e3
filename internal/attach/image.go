package attach

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	goimage "image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"regexp"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"
)

// Limits an image is brought within before it is sent: the providers'
// (Anthropic takes 5 MB of base64, about 3.75 MB of bytes, and scales
// anything over about 1.15 megapixels down on its side anyway).
const (
	MaxImageBytes = 3_750_000
	MaxImageSide  = 2000
)

// Image is an image ready to send: its bytes, content-addressed name and
// size.
type Image struct {
	Name          string // image-<sha256 hex>.<ext>
	MediaType     string
	Data          []byte
	Width, Height int
	Scaled        bool // downscaled to the limits
}

var extOf = map[string]string{"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}

// codecs are the decoders of the image types tiny-go sends.
var codecs = map[string]struct {
	config func(io.Reader) (goimage.Config, error)
	decode func(io.Reader) (goimage.Image, error)
}{
	"image/png":  {png.DecodeConfig, png.Decode},
	"image/jpeg": {jpeg.DecodeConfig, jpeg.Decode},
	"image/gif":  {gif.DecodeConfig, gif.Decode},
	"image/webp": {webp.DecodeConfig, webp.Decode},
}

func decodeConfig(mt string, data []byte) (goimage.Config, error) {
	c, ok := codecs[mt]
	if !ok {
		return goimage.Config{}, fmt.Errorf("%s is not an image type tiny-go sends", mt)
	}
	return c.config(bytes.NewReader(data))
}

func decode(mt string, data []byte) (goimage.Image, error) {
	c, ok := codecs[mt]
	if !ok {
		return nil, fmt.Errorf("%s is not an image type tiny-go sends", mt)
	}
	return c.decode(bytes.NewReader(data))
}

// PrepareImage checks that data really is an image of type mt and brings
// it within MaxImageBytes and MaxImageSide (downscaled and re-encoded as
// JPEG when it is not).
func PrepareImage(mt string, data []byte) (Image, error) {
	cfg, err := decodeConfig(mt, data)
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return Image{}, fmt.Errorf("not a readable %s image", extOf[mt])
	}
	img := Image{MediaType: mt, Data: data, Width: cfg.Width, Height: cfg.Height}
	if len(data) > MaxImageBytes || cfg.Width > MaxImageSide || cfg.Height > MaxImageSide {
		if cfg.Width*cfg.Height > 40_000_000 {
			return Image{}, fmt.Errorf("%dx%d pixels is too large to downscale", cfg.Width, cfg.Height)
		}
		src, err := decode(mt, data)
		if err != nil {
			return Image{}, fmt.Errorf("not a readable %s image: %v", extOf[mt], err)
		}
		side := MaxImageSide
		for {
			w, h := fit(cfg.Width, cfg.Height, side)
			dst := goimage.NewRGBA(goimage.Rect(0, 0, w, h))
			draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 85}); err != nil {
				return Image{}, err
			}
			if buf.Len() <= MaxImageBytes || side < 200 {
				img = Image{MediaType: "image/jpeg", Data: buf.Bytes(), Width: w, Height: h, Scaled: true}
				break
			}
			side = side * 3 / 4
		}
	}
	sum := sha256.Sum256(img.Data)
	img.Name = "image-" + hex.EncodeToString(sum[:]) + "." + extOf[img.MediaType]
	return img, nil
}

func fit(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return w, h
	}
	if w >= h {
		return side, max(1, h*side/w)
	}
	return max(1, w*side/h), side
}

// refRE finds the image references of a message text.
var refRE = regexp.MustCompile(`\[image: (image-[0-9a-f]{64}\.(?:png|jpg|gif|webp))\b`)

// ImageRef is the text that names img in a prompt (the v2 user message
// is a string; the bytes live beside the sessions under that name).
func ImageRef(img Image, from string) string {
	scaled := ""
	if img.Scaled {
		scaled = ", downscaled"
	}
	return fmt.Sprintf("[image: %s (%dx%d%s, from %s)]", img.Name, img.Width, img.Height, scaled, from)
}

// ImageRefs are the image names referenced in text, in order.
func ImageRefs(text string) []string {
	var out []string
	for _, m := range refRE.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// MediaTypeOf is the media type of a name ImageRefs returned.
func MediaTypeOf(name string) string {
	for mt, ext := range extOf {
		if len(name) > len(ext) && name[len(name)-len(ext)-1:] == "."+ext {
			return mt
		}
	}
	return ""
}
