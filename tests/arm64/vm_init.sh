#!/bin/busybox sh
# /init of the emulated arm64 machine (vm_integration.sh puts it into the initramfs with the
# arm64 jmethodtime at /jmethodtime, the example classes at /cls, tests/vm/cases.sh at
# /cases.sh, Debian's arm64 OpenJDK 17 and trixie's root with OpenJDK 25 at /root25): mounts
# what the cases need, runs them, and powers the machine off.
/bin/busybox --install -s /bin
mkdir -p /proc /sys /dev /tmp /sys/fs/bpf
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
export PATH=/usr/lib/jvm/java-17-openjdk-arm64/bin:/usr/bin:/bin
JMT_BIN=/jmethodtime JMT_CLS=/cls JMT_ROOT25=/root25 JMT_JAVA25=/usr/lib/jvm/java-25-openjdk-arm64/bin/java
. /cases.sh
sync
poweroff -f
