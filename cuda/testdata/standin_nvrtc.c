// A stand-in for NVRTC (see standin_rt.c for the runtime): the functions
// package cuda binds, with NVRTC's signatures and status codes. Its
// "compiler" builds the program's CUDA source as C with the C compiler
// (STANDIN_CC) under the emulation header standin_kernel.h (STANDIN_EMU, a
// path fixed when the tests build this library), and its "CUBIN" is the
// shared object that makes: the stand-in driver (standin_cuda.c) loads it
// and runs its kernels on the CPU.
//
// For each __global__ function the object also gets an entry point,
// standin_entry_NAME(void **params), which calls the kernel with the
// values params points to, and a signature, standin_sig_NAME, one letter a
// parameter: p a pointer, f float, d double, i int, u unsigned, l long
// long. The signatures come from the preprocessed source, in which
// __global__ is a marker, so kernels made by macros are found too.
//
// Strict where the real one is: an option NVRTC does not know, or no
// --gpu-architecture of an architecture it lists, is
// NVRTC_ERROR_INVALID_OPTION; a source that does not build is
// NVRTC_ERROR_COMPILATION with the compiler's messages as the log; the
// CUBIN of a program not compiled for a real architecture (sm_XY), or the
// PTX of one not compiled for a virtual one (compute_XY), is an error.
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef STANDIN_CC
#define STANDIN_CC "gcc"
#endif

enum { ok = 0, errOutOfMemory = 1, errInvalidInput = 3, errInvalidProgram = 4, errInvalidOption = 5, errCompilation = 6, errInternal = 11 };

#define MAGIC 0x4e565254u

typedef struct {
	unsigned magic;
	char *src, *name;
	char *log;
	unsigned char *image;
	size_t imageSize;
	int ptx; // compiled for a virtual architecture (compute_XY): the image is "PTX"
} program;

// The architectures the stand-in compiles for.
static const int archs[] = {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90};

int nvrtcGetNumSupportedArchs(int *n) {
	if (!n) return errInvalidInput;
	*n = (int)(sizeof archs / sizeof archs[0]);
	return ok;
}

int nvrtcGetSupportedArchs(int *a) {
	if (!a) return errInvalidInput;
	memcpy(a, archs, sizeof archs);
	return ok;
}

static int supported(int arch) {
	for (size_t i = 0; i < sizeof archs / sizeof archs[0]; i++)
		if (archs[i] == arch) return 1;
	return 0;
}

int nvrtcVersion(int *major, int *minor) {
	if (!major || !minor) return errInvalidInput;
	*major = 12, *minor = 4;
	return ok;
}

const char *nvrtcGetErrorString(int r) {
	switch (r) {
	case ok: return "NVRTC_SUCCESS";
	case errOutOfMemory: return "NVRTC_ERROR_OUT_OF_MEMORY";
	case errInvalidInput: return "NVRTC_ERROR_INVALID_INPUT";
	case errInvalidProgram: return "NVRTC_ERROR_INVALID_PROGRAM";
	case errInvalidOption: return "NVRTC_ERROR_INVALID_OPTION";
	case errCompilation: return "NVRTC_ERROR_COMPILATION";
	case errInternal: return "NVRTC_ERROR_INTERNAL_ERROR";
	}
	return "NVRTC_ERROR unknown";
}

int nvrtcCreateProgram(program **prog, const char *src, const char *name, int numHeaders, const char *const *headers,
		       const char *const *includeNames) {
	(void)headers, (void)includeNames;
	if (!prog || !src || numHeaders != 0) return errInvalidInput;
	program *p = calloc(1, sizeof *p);
	p->magic = MAGIC;
	p->src = strdup(src);
	p->name = strdup(name && *name ? name : "default_program");
	p->log = strdup("");
	*prog = p;
	return ok;
}

static int valid(const program *p) { return p && p->magic == MAGIC; }

int nvrtcDestroyProgram(program **prog) {
	if (!prog || !valid(*prog)) return errInvalidProgram;
	program *p = *prog;
	p->magic = 0;
	free(p->src), free(p->name), free(p->log), free(p->image);
	free(p);
	*prog = NULL;
	return ok;
}

static void setLog(program *p, const char *s) {
	free(p->log);
	p->log = strdup(s);
}

// readFile returns the contents of path (NUL-terminated) and its size.
static unsigned char *readFile(const char *path, size_t *size) {
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc((size_t)n + 1);
	if (n < 0 || fread(b, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(b);
		return NULL;
	}
	b[n] = 0;
	fclose(f);
	*size = (size_t)n;
	return b;
}

static int writeFile(const char *path, const char *s) {
	FILE *f = fopen(path, "wb");
	if (!f) return -1;
	int bad = fputs(s, f) < 0;
	return fclose(f) != 0 || bad ? -1 : 0;
}

// run runs a shell command with its output in the file out, and reports
// whether it succeeded.
static int run(const char *cmd, const char *out) {
	char *c;
	if (asprintf(&c, "%s >'%s' 2>&1", cmd, out) < 0) return 0;
	int r = system(c);
	free(c);
	return r == 0;
}

// A growing string.
typedef struct {
	char *s;
	size_t n, cap;
} buf;

static void add(buf *b, const char *s, size_t n) {
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = 0;
}
static void adds(buf *b, const char *s) { add(b, s, strlen(s)); }

// paramKind returns the signature letter of one parameter's declaration,
// or 0 if it is not one the stand-in can pass.
static char paramKind(const char *d, size_t n) {
	char t[512];
	if (n >= sizeof t) return 0;
	memcpy(t, d, n);
	t[n] = 0;
	if (strchr(t, '*')) return 'p';
	if (strchr(t, '[') || strchr(t, '&')) return 0;
	if (strstr(t, "double")) return 'd';
	if (strstr(t, "float")) return 'f';
	if (strstr(t, "long long")) return 'l';
	if (strstr(t, "unsigned")) return 'u';
	if (strstr(t, "int")) return 'i';
	return 0;
}

// cType is the C type of a signature letter.
static const char *cType(char k) {
	switch (k) {
	case 'p': return "void *";
	case 'd': return "double";
	case 'f': return "float";
	case 'l': return "long long";
	case 'u': return "unsigned";
	}
	return "int";
}

// wrappers appends to w an entry point and a signature for each kernel
// (marked standin_kernel_marker) of the preprocessed source pre; it
// returns 0, or -1 with a message in msg.
static int wrappers(const char *pre, buf *w, char *msg, size_t msgSize) {
	static const char marker[] = "standin_kernel_marker";
	int count = 0;
	for (const char *p = strstr(pre, marker); p; p = strstr(p, marker)) {
		p += sizeof marker - 1;
		while (isspace((unsigned char)*p)) p++;
		if (strncmp(p, "void", 4) != 0 || !isspace((unsigned char)p[4])) {
			snprintf(msg, msgSize, "standin: a __global__ function must return void");
			return -1;
		}
		p += 4;
		while (isspace((unsigned char)*p)) p++;
		const char *name = p;
		while (isalnum((unsigned char)*p) || *p == '_') p++;
		size_t nameLen = (size_t)(p - name);
		while (isspace((unsigned char)*p)) p++;
		if (nameLen == 0 || *p != '(') {
			snprintf(msg, msgSize, "standin: cannot read a __global__ function's name");
			return -1;
		}
		p++;
		char sig[64];
		int np = 0;
		const char *close = strchr(p, ')');
		if (!close) {
			snprintf(msg, msgSize, "standin: unterminated parameter list of %.*s", (int)nameLen, name);
			return -1;
		}
		for (const char *q = p; q < close;) {
			const char *e = q;
			while (e < close && *e != ',') e++;
			const char *a = q;
			while (a < e && isspace((unsigned char)*a)) a++;
			if (e > a && !(e - a == 4 && strncmp(a, "void", 4) == 0)) {
				char k = paramKind(a, (size_t)(e - a));
				if (!k || np == (int)sizeof sig - 1) {
					snprintf(msg, msgSize, "standin: parameter %d of %.*s is not one the stand-in passes: %.*s", np,
						 (int)nameLen, name, (int)(e - a), a);
					return -1;
				}
				sig[np++] = k;
			}
			q = e < close ? e + 1 : e;
		}
		sig[np] = 0;
		char line[256];
		snprintf(line, sizeof line, "const char standin_sig_%.*s[] = \"%s\";\n", (int)nameLen, name, sig);
		adds(w, line);
		snprintf(line, sizeof line, "void standin_entry_%.*s(void **a) {\n\t%.*s(", (int)nameLen, name, (int)nameLen, name);
		adds(w, line);
		for (int i = 0; i < np; i++) {
			snprintf(line, sizeof line, "%s*(%s *)a[%d]", i ? ", " : "", cType(sig[i]), i);
			adds(w, line);
		}
		adds(w, ");\n}\n");
		count++;
		p = close;
	}
	if (count == 0) {
		snprintf(msg, msgSize, "standin: the program has no __global__ function");
		return -1;
	}
	return 0;
}

static int startsWith(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int nvrtcCompileProgram(program *p, int numOptions, const char *const *options) {
	if (!valid(p)) return errInvalidProgram;
	if (numOptions < 0 || (numOptions > 0 && !options)) return errInvalidInput;
	free(p->image);
	p->image = NULL, p->imageSize = 0;
	int arch = 0;
	p->ptx = 0;
	for (int i = 0; i < numOptions; i++) {
		const char *o = options[i];
		if (startsWith(o, "--gpu-architecture=sm_") || startsWith(o, "-arch=sm_") ||
		    startsWith(o, "--gpu-architecture=compute_") || startsWith(o, "-arch=compute_")) {
			arch = atoi(strchr(o, '_') + 1);
			p->ptx = strstr(o, "compute_") != NULL;
		} else if (strcmp(o, "--fmad=false") == 0 || strcmp(o, "--fmad=true") == 0 || strcmp(o, "--ftz=false") == 0 ||
			   strcmp(o, "--ftz=true") == 0 || strcmp(o, "--prec-div=true") == 0 || strcmp(o, "--prec-div=false") == 0 ||
			   strcmp(o, "--prec-sqrt=true") == 0 || strcmp(o, "--prec-sqrt=false") == 0 ||
			   strcmp(o, "--use_fast_math") == 0 || startsWith(o, "--std=") || startsWith(o, "-D")) {
		} else {
			char m[600];
			snprintf(m, sizeof m, "nvrtc: error: unrecognized option %s\n", o);
			setLog(p, m);
			return errInvalidOption;
		}
	}
	if (!supported(arch)) {
		setLog(p, "nvrtc: error: give --gpu-architecture=sm_XY or compute_XY of a supported architecture\n");
		return errInvalidOption;
	}

	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof dir, "%s/standin-nvrtc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) return errInternal;
	char *src, *pre, *gen, *so, *log, *cmd;
	asprintf(&src, "%s/%s", dir, p->name);
	asprintf(&pre, "%s/pre.i", dir);
	asprintf(&gen, "%s/gen.c", dir);
	asprintf(&so, "%s/kernels.so", dir);
	asprintf(&log, "%s/log", dir);
	int status = errInternal;
	size_t n;
	if (writeFile(src, p->src) != 0) goto out;

	// 1. The preprocessed source, __global__ marked, for the signatures.
	asprintf(&cmd, "%s -E -P -x c -D__global__=standin_kernel_marker -include '%s' '%s' -o '%s'", STANDIN_CC, STANDIN_EMU,
		 src, pre);
	int good = run(cmd, log);
	free(cmd);
	if (!good) {
		unsigned char *l = readFile(log, &n);
		setLog(p, l ? (char *)l : "standin: the preprocessor failed\n");
		free(l);
		status = errCompilation;
		goto out;
	}
	unsigned char *text = readFile(pre, &n);
	if (!text) goto out;
	buf w = {0};
	adds(&w, "#include \"");
	adds(&w, p->name);
	adds(&w, "\"\n");
	char msg[600];
	int bad = wrappers((char *)text, &w, msg, sizeof msg);
	free(text);
	if (bad) {
		strcat(msg, "\n");
		setLog(p, msg);
		free(w.s);
		status = errCompilation;
		goto out;
	}
	int wrote = writeFile(gen, w.s);
	free(w.s);
	if (wrote != 0) goto out;

	// 2. The shared object: the source and the entry points, no FMA
	// contraction, IEEE arithmetic.
	asprintf(&cmd,
		 "%s -x c -std=gnu11 -O1 -ffp-contract=off -fno-fast-math -fPIC -shared -Werror=implicit-function-declaration "
		 "-include '%s' -I'%s' '%s' -o '%s' -lm",
		 STANDIN_CC, STANDIN_EMU, dir, gen, so);
	good = run(cmd, log);
	free(cmd);
	unsigned char *l = readFile(log, &n);
	setLog(p, l ? (char *)l : "");
	free(l);
	if (!good) {
		status = errCompilation;
		goto out;
	}
	p->image = readFile(so, &p->imageSize);
	status = p->image ? ok : errInternal;
out:
	unlink(src), unlink(pre), unlink(gen), unlink(so), unlink(log), rmdir(dir);
	free(src), free(pre), free(gen), free(so), free(log);
	return status;
}

int nvrtcGetProgramLogSize(program *p, size_t *size) {
	if (!valid(p)) return errInvalidProgram;
	if (!size) return errInvalidInput;
	*size = strlen(p->log) + 1;
	return ok;
}

int nvrtcGetProgramLog(program *p, char *log) {
	if (!valid(p)) return errInvalidProgram;
	if (!log) return errInvalidInput;
	strcpy(log, p->log);
	return ok;
}

// The image: "CUBIN" of a program compiled for sm_XY, "PTX" of one for
// compute_XY (the same shared object: the stand-in driver loads both).
static int getSize(program *p, size_t *size, int ptx) {
	if (!valid(p)) return errInvalidProgram;
	if (!size || !p->image || p->ptx != ptx) return errInvalidInput;
	*size = p->imageSize;
	return ok;
}

static int get(program *p, char *out, int ptx) {
	if (!valid(p)) return errInvalidProgram;
	if (!out || !p->image || p->ptx != ptx) return errInvalidInput;
	memcpy(out, p->image, p->imageSize);
	return ok;
}

int nvrtcGetCUBINSize(program *p, size_t *size) { return getSize(p, size, 0); }
int nvrtcGetCUBIN(program *p, char *cubin) { return get(p, cubin, 0); }
int nvrtcGetPTXSize(program *p, size_t *size) { return getSize(p, size, 1); }
int nvrtcGetPTX(program *p, char *ptx) { return get(p, ptx, 1); }
