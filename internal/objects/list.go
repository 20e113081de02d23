package objects

import (
	"context"
	"io"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Entry is what a directory URL lists: an object, or a prefix with
// objects under it (a directory).
type Entry struct {
	// Name is the entry's name under the directory, without a slash.
	Name string
	Dir  bool
}

// IsDir reports whether the URL raw names a directory: it ends with a
// slash, names a bucket's root, or is a prefix with objects under it but
// no object of its own. An error says the URL names neither (not found) or
// could not be looked at.
func IsDir(ctx context.Context, raw string) (bool, error) {
	l, err := parse(raw)
	if err != nil {
		return false, err
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return true, nil
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return false, describe(err)
	}
	_, err = b.Attributes(ctx, l.key)
	if err == nil {
		return false, nil
	}
	if gcerrors.Code(err) != gcerrors.NotFound {
		return false, describe(err)
	}
	if dir, lerr := hasUnder(ctx, b, l.key); dir || lerr != nil {
		return dir, lerr
	}
	return false, describe(err)
}

// hasUnder reports whether any object lies under key taken as a prefix.
func hasUnder(ctx context.Context, b *blob.Bucket, key string) (bool, error) {
	page, _, err := b.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: dirKey(key)})
	if err != nil {
		return false, describe(err)
	}
	return len(page) > 0, nil
}

// List lists the directory URL dir one level down, as os.ReadDir does a
// directory: the objects directly under its prefix and the prefixes
// below it, in the store's order (by key). A directory marker (an object
// named as the prefix itself) is left out.
func List(ctx context.Context, dir string) ([]Entry, error) {
	l, err := parse(dir)
	if err != nil {
		return nil, err
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return nil, describe(err)
	}
	prefix := dirKey(l.key)
	it := b.List(&blob.ListOptions{Prefix: prefix, Delimiter: "/"})
	var out []Entry
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, describe(err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(obj.Key, prefix), "/")
		if name == "" {
			continue
		}
		out = append(out, Entry{Name: name, Dir: obj.IsDir})
	}
}

// Walk calls fn with the name, relative to the directory URL dir, of
// every object under dir's prefix at any depth, in the store's order (by
// key); an error from fn stops the walk and is returned.
func Walk(ctx context.Context, dir string, fn func(name string) error) error {
	l, err := parse(dir)
	if err != nil {
		return err
	}
	b, err := bucket(ctx, l)
	if err != nil {
		return describe(err)
	}
	prefix := dirKey(l.key)
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return describe(err)
		}
		if name := strings.TrimPrefix(obj.Key, prefix); name != "" && !obj.IsDir {
			if err := fn(name); err != nil {
				return err
			}
		}
	}
}
