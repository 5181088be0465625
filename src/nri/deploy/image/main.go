// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

// mkimage: an OCI image archive from a directory, without a container
// engine or a registry: the directory is the image's one layer (owned by
// root, times zeroed: the same files give the same image), its config
// names the platform (containerd drops images without one on import) and
// the entrypoint, and the archive is an OCI image layout in a tar, with
// the name containerd's import reads (io.containerd.image.name) and OCI's
// ref name.
//
//	mkimage -root DIR -name NAME:TAG -o FILE.tar [-entrypoint ARG,...] [-cmd ARG,...]
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/distribution/reference"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

func main() {
	root := flag.String("root", "", "directory whose files are the image's")
	name := flag.String("name", "", "image name with its tag, e.g. mthpctl-nri:0.1.0")
	out := flag.String("o", "", "the OCI archive to write")
	entry := flag.String("entrypoint", "", "entrypoint, comma-separated words")
	cmd := flag.String("cmd", "", "default arguments, comma-separated words")
	flag.Parse()
	if *root == "" || *name == "" || *out == "" || !strings.Contains(*name, ":") {
		fmt.Fprintln(os.Stderr, "mkimage: give -root DIR -name NAME:TAG -o FILE.tar")
		os.Exit(2)
	}
	if err := build(*root, *name, *out, words(*entry), words(*cmd)); err != nil {
		fmt.Fprintf(os.Stderr, "mkimage: %v\n", err)
		os.Exit(1)
	}
}

func words(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func build(root, name, out string, entry, cmd []string) error {
	layerTar, err := tarDir(root)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", runtime.GOARCH
	cf.Config.Entrypoint, cf.Config.Cmd = entry, cmd
	cf.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)

	dir, err := os.MkdirTemp(filepath.Dir(out), ".oci-layout.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	lp, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	// containerd's import keeps the name as given; the CRI plugin looks
	// images up by their normalized name, which the reference library
	// containerd itself uses gives
	ref, err := reference.ParseNormalizedNamed(name)
	if err != nil {
		return fmt.Errorf("image name %q: %w", name, err)
	}
	full := reference.TagNameOnly(ref).String()
	tag := name[strings.LastIndex(name, ":")+1:]
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"io.containerd.image.name":          full,
		"org.opencontainers.image.ref.name": tag,
	}), layout.WithPlatform(v1.Platform{OS: "linux", Architecture: runtime.GOARCH})); err != nil {
		return err
	}
	layoutTar, err := tarDir(dir)
	if err != nil {
		return err
	}
	tmp := out + ".tmp"
	if err := os.WriteFile(tmp, layoutTar, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, out)
}

// tarDir is dir's tree as a tar: sorted, owned by root, times zeroed,
// symbolic links kept as links.
func tarDir(dir string) ([]byte, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		link := ""
		if fi.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return nil, err
			}
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, p)
		h.Name = filepath.ToSlash(rel)
		if fi.IsDir() {
			h.Name += "/"
		}
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "root", "root"
		h.ModTime, h.AccessTime, h.ChangeTime = zeroTime, zeroTime, zeroTime
		h.Format = tar.FormatPAX
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if fi.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return nil, err
			}
			_, err = io.Copy(tw, f)
			f.Close()
			if err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

var zeroTime = time.Unix(0, 0)
