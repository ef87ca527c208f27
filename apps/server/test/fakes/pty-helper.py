# Test-only: runs argv[3:] on a new pseudo-terminal of size argv[1] x argv[2], relaying stdin to it
# and its output to stdout; "cols rows" lines on fd 3 resize it. Exits with the child's status
# (128 + signal when a signal ended it). Used by test/fakes/ssh-access.ts, never by the product.
import fcntl, os, pty, select, signal, struct, sys, termios

def winsize(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))

cols, rows = int(sys.argv[1]), int(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[3], sys.argv[3:])
winsize(fd, cols, rows)
inputs = [0, fd, 3]
buf = b''
while True:
    try:
        r, _, _ = select.select(inputs, [], [])
    except InterruptedError:
        continue
    if fd in r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b''
        if not data:
            break
        os.write(1, data)
    if 0 in r:
        data = os.read(0, 65536)
        if data:
            os.write(fd, data)
        else:
            inputs.remove(0)
    if 3 in r:
        data = os.read(3, 4096)
        if not data:
            inputs.remove(3)
        else:
            buf += data
            while b'\n' in buf:
                line, buf = buf.split(b'\n', 1)
                c, rr = line.split()
                winsize(fd, int(c), int(rr))
_, status = os.waitpid(pid, 0)
if os.WIFSIGNALED(status):
    sys.exit(128 + os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status))
