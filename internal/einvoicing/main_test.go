package einvoicing

import (
	"testing"

	"github.com/denar-mk/denar/internal/store/storetest"
)

func TestMain(m *testing.M) { storetest.Main(m) }
