package testservers

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
)

// AzuriteEnv names the environment variable that gives the path of
// Azurite's azurite-blob script, which Azure starts; .ci/run installs it
// from the npm registry and sets it.
const AzuriteEnv = "TRACEGAP_AZURITE"

// The emulator's well-known development account and its key, which
// Microsoft publishes for Azurite.
const (
	AzureAccount = "devstoreaccount1"
	AzureKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// AzureServer is a running Azurite Blob service.
type AzureServer struct {
	Host   string         // 127.0.0.1:PORT
	Client *azblob.Client // to the development account, with its key
}

var azurite lazy[*AzureServer]

// Azure returns the Azure Blob emulator, started on first use and shared
// by the test binary's tests; containers are the tests' own to keep
// apart. It does not change the environment: see UseEnv and Env. It skips
// the test when $TRACEGAP_AZURITE is not set, and fails it under CI.
func Azure(t testing.TB) *AzureServer {
	t.Helper()
	return azurite.get(t, AzuriteEnv, "Azurite", startAzurite,
		"no Azure Blob emulator (set %s to Azurite's azurite-blob script; .ci/run installs one)")
}

// startAzurite starts Azurite's Blob service on a free local port, its
// data in a temporary directory, and waits until it lists containers.
func startAzurite(bin string) (*AzureServer, func(), error) {
	ports, err := freePorts(1)
	if err != nil {
		return nil, nil, err
	}
	port := strconv.Itoa(ports[0])
	dir, err := os.MkdirTemp("", "tracegap-azurite-*")
	if err != nil {
		return nil, nil, err
	}
	proc, err := startIn(dir, "azurite", bin, "--blobHost", "127.0.0.1", "--blobPort", port,
		"--location", dir, "--skipApiVersionCheck", "--loose", "--disableTelemetry", "--silent")
	if err != nil {
		return nil, nil, err
	}
	s := &AzureServer{Host: "127.0.0.1:" + port}
	cred, err := azblob.NewSharedKeyCredential(AzureAccount, AzureKey)
	if err == nil {
		s.Client, err = azblob.NewClientWithSharedKeyCredential("http://"+s.Host+"/"+AzureAccount+"/", cred, nil)
	}
	if err != nil {
		proc.stop()
		return nil, nil, err
	}
	ready := func(ctx context.Context) error {
		_, err := s.Client.NewListContainersPager(nil).NextPage(ctx)
		return err
	}
	if err := proc.waitReady(ready); err != nil {
		return nil, nil, err
	}
	return s, proc.stop, nil
}

// Env returns the Azure environment a child process needs to reach the
// emulator's development account with azblob:// URLs, and no other
// credentials: append it to os.Environ().
func (s *AzureServer) Env() []string {
	return []string{
		"AZURE_STORAGE_ACCOUNT=" + AzureAccount,
		"AZURE_STORAGE_KEY=" + AzureKey,
		"AZURE_STORAGE_DOMAIN=" + s.Host,
		"AZURE_STORAGE_PROTOCOL=http",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR=true",
		"AZURE_STORAGE_IS_CDN=",
		"AZURE_STORAGE_SAS_TOKEN=",
		"AZURE_STORAGE_CONNECTION_STRING=",
		"AZURE_STORAGEBLOB_CONNECTIONSTRING=",
	}
}

// UseEnv sets, for the test, the Azure environment through which
// azblob:// URLs reach the emulator, as a user would set it.
func (s *AzureServer) UseEnv(t testing.TB) { setEnv(t, s.Env()) }

// Bucket creates the container name.
func (s *AzureServer) Bucket(t testing.TB, name string) {
	t.Helper()
	if _, err := s.Client.CreateContainer(context.Background(), name, nil); err != nil {
		t.Fatalf("creating container %s: %v", name, err)
	}
}

// Upload puts the local file path at key in the container bucket.
func (s *AzureServer) Upload(t testing.TB, bucket, key, path string) {
	t.Helper()
	uploadFile(t, "azblob://"+bucket+"/"+key, path, func(ctx context.Context, f *os.File) error {
		_, err := s.Client.UploadFile(ctx, bucket, key, f, nil)
		return err
	})
}

// Keys lists the keys under prefix in the container bucket.
func (s *AzureServer) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	pager := s.Client.NewListBlobsFlatPager(bucket, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	var keys []string
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("listing azblob://%s/%s: %v", bucket, prefix, err)
		}
		for _, b := range page.Segment.BlobItems {
			keys = append(keys, *b.Name)
		}
	}
	return keys
}
