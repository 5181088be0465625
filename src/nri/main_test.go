// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

package main

import (
	"os"
	"testing"

	"github.com/sirupsen/logrus"
)

// NRI's runtime and stub log through logrus: only their warnings.
func TestMain(m *testing.M) {
	logrus.SetLevel(logrus.WarnLevel)
	os.Exit(m.Run())
}
