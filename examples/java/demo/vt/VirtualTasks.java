package demo.vt;

import demo.util.Harness;
import demo.util.PinnedWarmup;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * usage: VirtualTasks MODE THREADS ROUNDS BLOCK_MS WORK_US [early]. JDK 21+.
 * THREADS virtual threads (named vt-0, vt-1, ...) each run task(): ROUNDS calls of step(),
 * which calls work() (WORK_US µs busy), blocks for BLOCK_MS, and calls work() again. How it
 * blocks, by MODE: sleep (Thread.sleep), wait (Object.wait(BLOCK_MS) in synchronized on a lock
 * of its own), pinned (Thread.sleep inside synchronized on a lock of its own: JDK 21 to 23
 * cannot unmount it, the carrier blocks), contended (Thread.sleep inside synchronized on one
 * lock all threads share).
 * A virtual thread unmounts while it blocks (in synchronized from JDK 24) and may go on on
 * another carrier. early: the threads start before READY and wait inside task() until GO,
 * so a tracer attached at READY finds task() open (a mid-run attach).
 * DONE steps=N step_ns=sum of step()'s elapsed, blocked_ns=sum of the blocking parts'
 * elapsed, work_ns=sum of work()'s elapsed, cpu_ns=the JVM's CPU time from GO to the end,
 * all as the JVM measures them (System.nanoTime, the process's CPU clock), and
 * carrier_cpu_ns=the carriers' CPU time from GO to the end as the kernel counts it (the first
 * field of /proc/self/task/TID/schedstat of the threads named ForkJoinPool*; left out if none).
 */
public final class VirtualTasks {
    static String mode;
    static int rounds;
    static long blockMs;
    static long workNs;
    static final Object SHARED = new Object();
    static final AtomicLong STEPS = new AtomicLong(), STEP_NS = new AtomicLong(), BLOCKED_NS = new AtomicLong(),
            WORK_NS = new AtomicLong();
    static final CountDownLatch GO = new CountDownLatch(1);

    static void work() {
        long t0 = System.nanoTime();
        long end = t0 + workNs;
        while (System.nanoTime() < end) { }
        WORK_NS.addAndGet(System.nanoTime() - t0);
    }

    static void block(Object own) throws InterruptedException {
        long t0 = System.nanoTime();
        if (mode.equals("sleep")) {
            Thread.sleep(blockMs);
        } else if (mode.equals("pinned")) {
            synchronized (own) {
                Thread.sleep(blockMs);
            }
        } else if (mode.equals("wait")) {
            synchronized (own) {
                own.wait(blockMs);
            }
        } else {
            synchronized (SHARED) {
                Thread.sleep(blockMs);
            }
        }
        BLOCKED_NS.addAndGet(System.nanoTime() - t0);
    }

    static void step(Object own) throws InterruptedException {
        work();
        block(own);
        work();
    }

    static void task() {
        Object own = new Object();
        try {
            GO.await();
            for (int r = 0; r < rounds; r++) {
                long t0 = System.nanoTime();
                step(own);
                STEP_NS.addAndGet(System.nanoTime() - t0);
                STEPS.incrementAndGet();
            }
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    /** ns on a CPU per thread named ForkJoinPool* (the virtual threads' carriers), by TID. */
    static Map<String, Long> carriersCpu() throws IOException {
        Map<String, Long> cpu = new HashMap<>();
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (Path task : (Iterable<Path>) tasks::iterator) {
                try {
                    if (!new String(Files.readAllBytes(task.resolve("comm"))).startsWith("ForkJoinPool")) {
                        continue;
                    }
                    String schedstat = new String(Files.readAllBytes(task.resolve("schedstat")));
                    cpu.put(task.getFileName().toString(), Long.parseLong(schedstat.split(" ")[0]));
                } catch (IOException gone) {
                    // The thread ended between the listing and the read.
                }
            }
        }
        return cpu;
    }

    /** Thread.ofVirtual().name("vt-", 0).factory(), through reflection: compiled for JDK 17. */
    static ThreadFactory virtualThreads() throws Exception {
        Class<?> builder = Class.forName("java.lang.Thread$Builder");
        Object b = Thread.class.getMethod("ofVirtual").invoke(null);
        b = builder.getMethod("name", String.class, long.class).invoke(b, "vt-", 0L);
        return (ThreadFactory) builder.getMethod("factory").invoke(b);
    }

    /** Thread.ofVirtual().factory(), unnamed: the warm-up's thread is none of the vt-N. */
    static ThreadFactory warmupThreads() throws Exception {
        Object b = Thread.class.getMethod("ofVirtual").invoke(null);
        return (ThreadFactory) Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(b);
    }

    public static void main(String[] args) throws Exception {
        mode = args[0];
        int threads = Integer.parseInt(args[1]);
        rounds = Integer.parseInt(args[2]);
        blockMs = Long.parseLong(args[3]);
        workNs = Long.parseLong(args[4]) * 1000L;
        boolean early = args.length > 5 && args[5].equals("early");
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadFactory factory = virtualThreads();
        Thread[] all = new Thread[threads];
        for (int i = 0; i < threads && early; i++) {
            all[i] = factory.newThread(VirtualTasks::task);
            all[i].start();
        }
        if (mode.equals("pinned")) {
            PinnedWarmup.run(warmupThreads());
        }
        Harness.awaitGo();
        long cpu0 = os.getProcessCpuTime();
        for (int i = 0; i < threads && !early; i++) {
            all[i] = factory.newThread(VirtualTasks::task);
            all[i].start();
        }
        Map<String, Long> carriers0 = carriersCpu();
        GO.countDown();
        for (Thread t : all) {
            t.join();
        }
        long cpu = os.getProcessCpuTime() - cpu0;
        Map<String, Long> carriersEnd = carriersCpu();
        long carrierCpu = 0;
        for (Map.Entry<String, Long> carrier : carriersEnd.entrySet()) {
            carrierCpu += carrier.getValue() - carriers0.getOrDefault(carrier.getKey(), 0L);
        }
        String carriers = carriersEnd.isEmpty() ? "" : " carrier_cpu_ns=".concat(Long.toString(carrierCpu));
        Harness.done("steps=".concat(Long.toString(STEPS.get())).concat(" step_ns=").concat(Long.toString(STEP_NS.get()))
                .concat(" blocked_ns=").concat(Long.toString(BLOCKED_NS.get()))
                .concat(" work_ns=").concat(Long.toString(WORK_NS.get()))
                .concat(" cpu_ns=").concat(Long.toString(cpu)).concat(carriers));
    }
}
