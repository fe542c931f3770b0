package tensor

// HostSyncer is implemented by an engine that leaves the newer values of
// tensors in device memory (see Storage): SyncHost copies every part of
// s's elements that the device holds newer to host memory and then calls
// s.ClearDeviceNewer. It must not count a write (the values do not
// change), must be safe for concurrent use, and must not call back into
// the storage's tensors' methods.
type HostSyncer interface {
	SyncHost(s *Storage)
}

// DeviceMark names the engine whose device memory holds a storage's newer
// values. An engine makes one with NewDeviceMark and reuses it for every
// storage it marks.
type DeviceMark struct {
	by HostSyncer
}

// NewDeviceMark returns the mark of the engine by.
func NewDeviceMark(by HostSyncer) *DeviceMark { return &DeviceMark{by: by} }

// MarkDeviceNewer records that m's engine holds values of s's elements
// newer than host memory's; the next host access calls Sync.
func (s *Storage) MarkDeviceNewer(m *DeviceMark) { s.device.Store(m) }

// ClearDeviceNewer records that host memory holds s's newest values.
func (s *Storage) ClearDeviceNewer() { s.device.Store(nil) }

// Shared reports whether s is the memory of a slice handed to FromSlice:
// its caller may read that slice at any time, so an engine must copy
// results written into it back to the host at once rather than mark the
// storage.
func (s *Storage) Shared() bool { return s.shared }

// DeviceNewer reports whether a device holds newer values of s's elements
// than host memory.
func (s *Storage) DeviceNewer() bool { return s.device.Load() != nil }

// Sync brings s's host memory up to date, copying from the device that
// holds newer values, if any. Every method of this package calls it
// before touching elements; a package that reads host memory in another
// way (HostMemory) calls it itself.
func (s *Storage) Sync() {
	if m := s.device.Load(); m != nil {
		m.by.SyncHost(s)
	}
}
