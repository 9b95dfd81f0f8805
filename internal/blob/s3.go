package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config names an S3-compatible bucket.
type S3Config struct {
	// Endpoint is the service's base URL: https://s3.eu-central-1.amazonaws.com,
	// http://127.0.0.1:7070, …
	Endpoint  string
	Region    string
	Bucket    string
	AccessKey string
	SecretKey string
	// Prefix is put before every key ("denar/" keeps denar's objects apart
	// in a shared bucket).
	Prefix string
	// PartSize is the size of one part of a multipart upload, the memory
	// one Put buffers; default 8 MiB (S3's minimum is 5 MiB).
	PartSize uint64
	// PathStyle addresses the bucket in the path (http://host/bucket/key)
	// rather than in the host name; most self-hosted servers want it.
	PathStyle bool
}

// S3 is the store on an S3-compatible object store (minio-go client). Put
// streams a multipart upload, one part in memory at a time; the object
// appears when the upload completes, so a crash mid-way leaves nothing
// readable (the service side drops incomplete uploads by its own rules).
type S3 struct {
	c        *minio.Client
	bucket   string
	prefix   string
	partSize uint64
}

// NewS3 returns the store for cfg; it does not call the service.
func NewS3(cfg S3Config) (*S3, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("S3 endpoint %q: want http(s)://host[:port]", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("S3 bucket is empty")
	}
	lookup := minio.BucketLookupDNS
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, ""),
		Secure: u.Scheme == "https", Region: cfg.Region, BucketLookup: lookup})
	if err != nil {
		return nil, fmt.Errorf("S3 client: %w", err)
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 8 << 20
	}
	return &S3{c: c, bucket: cfg.Bucket, prefix: cfg.Prefix, partSize: cfg.PartSize}, nil
}

// EnsureBucket creates the bucket unless it exists.
func (s *S3) EnsureBucket(ctx context.Context) error {
	ok, err := s.c.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("S3 bucket %s: %w", s.bucket, err)
	}
	if ok {
		return nil
	}
	if err := s.c.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		return fmt.Errorf("S3 make bucket %s: %w", s.bucket, err)
	}
	return nil
}

func (s *S3) name(key string) string { return s.prefix + strings.TrimPrefix(key, "/") }

// Put implements Store.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	info, err := s.c.PutObject(ctx, s.bucket, s.name(key), r, -1, minio.PutObjectOptions{
		PartSize: s.partSize, ContentType: "application/octet-stream"})
	if err != nil {
		return 0, fmt.Errorf("S3 put %s: %w", key, err)
	}
	return info.Size, nil
}

// Open implements Store.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	st, err := s.c.StatObject(ctx, s.bucket, s.name(key), minio.StatObjectOptions{})
	if err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, 0, ErrNotFound
		}
		return nil, 0, fmt.Errorf("S3 stat %s: %w", key, err)
	}
	obj, err := s.c.GetObject(ctx, s.bucket, s.name(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, fmt.Errorf("S3 get %s: %w", key, err)
	}
	return obj, st.Size, nil
}

// Delete implements Store.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := s.c.RemoveObject(ctx, s.bucket, s.name(key), minio.RemoveObjectOptions{}); err != nil {
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil
		}
		return fmt.Errorf("S3 delete %s: %w", key, err)
	}
	return nil
}
