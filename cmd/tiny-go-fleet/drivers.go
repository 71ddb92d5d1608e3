//go:build fleet_cloud

package main

// The cloud drivers of --blob (file:// is always there). They double the
// binary (35 -> 80 MB) and its build time (7 minutes on a loaded 2-core
// machine), so they are opt-in: go install -tags fleet_cloud
// github.com/tiny-agent/tiny-go/cmd/tiny-go-fleet (docs/fleet.md).
import (
	_ "gocloud.dev/blob/gcsblob" // gs://bucket
	_ "gocloud.dev/blob/s3blob"  // s3://bucket
)
