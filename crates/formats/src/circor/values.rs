//! Value types: the closed value sets of the patient file (age groups, sites, murmur
//! characteristics, labels...) and [`PatientInfo`], its typed `#Key: value` lines.

use std::fmt;

use super::Annotation;
use super::keys;

/// The closed value sets of the patient file, shared by the typed parser.
trait ValueSet: Copy + 'static {
    const ALL: &'static [Self];
    fn text(self) -> &'static str;
}

macro_rules! value_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $var:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vdoc])* $var),+
        }

        impl $name {
            /// Every value, in the order the data description lists them.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The spelling the data files use.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$var => $text),+
                }
            }

            /// Parses a value as the official helper code compares strings: surrounding
            /// whitespace is ignored and letters match in any case.
            pub fn from_value(s: &str) -> Option<$name> {
                let s = s.trim();
                $name::ALL.iter().copied().find(|v| v.as_str().eq_ignore_ascii_case(s))
            }
        }

        impl ValueSet for $name {
            const ALL: &'static [Self] = $name::ALL;
            fn text(self) -> &'static str {
                self.as_str()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

value_enum! {
    /// `#Age:`, an age group.
    AgeGroup {
        Neonate = "Neonate",
        Infant = "Infant",
        Child = "Child",
        Adolescent = "Adolescent",
        /// Written `Young adult` in the data table and `Young Adult` in the example code;
        /// both parse.
        YoungAdult = "Young adult",
    }
}

value_enum! {
    /// `#Sex:`.
    Sex { Female = "Female", Male = "Male" }
}

value_enum! {
    /// `#Murmur:`, the murmur task's label, in the scorer's canonical class order.
    Murmur { Present = "Present", Unknown = "Unknown", Absent = "Absent" }
}

value_enum! {
    /// `#Outcome:`, the clinical-outcome task's label.
    Outcome { Abnormal = "Abnormal", Normal = "Normal" }
}

value_enum! {
    /// `#Campaign:`, the screening campaign (July-August 2014 or June-July 2015).
    Campaign { Cc2014 = "CC2014", Cc2015 = "CC2015" }
}

value_enum! {
    /// An auscultation site.
    Site {
        /// Aortic valve point.
        Av = "AV",
        /// Pulmonary valve point.
        Pv = "PV",
        /// Tricuspid valve point.
        Tv = "TV",
        /// Mitral valve point.
        Mv = "MV",
        /// Any other location.
        Phc = "Phc",
    }
}

value_enum! {
    /// `#Systolic murmur timing:`.
    SystolicTiming {
        Early = "Early-systolic",
        Mid = "Mid-systolic",
        Late = "Late-systolic",
        Holo = "Holosystolic",
    }
}

value_enum! {
    /// `#Diastolic murmur timing:`.
    DiastolicTiming {
        Early = "Early-diastolic",
        Mid = "Mid-diastolic",
        Holo = "Holodiastolic",
    }
}

value_enum! {
    /// Murmur shape. The data table lists only Decrescendo and Plateau for diastolic
    /// murmurs; we accept all four there, since the words are one vocabulary and nothing
    /// breaks if a diastolic murmur is ever called a diamond.
    MurmurShape {
        Crescendo = "Crescendo",
        Decrescendo = "Decrescendo",
        Diamond = "Diamond",
        Plateau = "Plateau",
    }
}

value_enum! {
    /// Murmur pitch.
    Pitch { Low = "Low", Medium = "Medium", High = "High" }
}

value_enum! {
    /// Murmur quality (the data table lists Musical only for systolic murmurs; accepted
    /// for both, as for [`MurmurShape`]).
    Quality { Blowing = "Blowing", Harsh = "Harsh", Musical = "Musical" }
}

value_enum! {
    /// Systolic murmur grade on the Levine scale (out of VI).
    SystolicGrade { Grade1 = "I/VI", Grade2 = "II/VI", Grade3 = "III/VI" }
}

value_enum! {
    /// Diastolic murmur grade (out of IV).
    DiastolicGrade { Grade1 = "I/IV", Grade2 = "II/IV", Grade3 = "III/IV" }
}

/// The five characteristics annotated for a systolic or a diastolic murmur; `None` where
/// the file says `nan` (no such murmur) or has no line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MurmurDescription<T, G> {
    pub timing: Option<T>,
    pub shape: Option<MurmurShape>,
    pub grading: Option<G>,
    pub pitch: Option<Pitch>,
    pub quality: Option<Quality>,
}

impl<T, G> Default for MurmurDescription<T, G> {
    fn default() -> Self {
        MurmurDescription {
            timing: None,
            shape: None,
            grading: None,
            pitch: None,
            quality: None,
        }
    }
}

impl<T, G> MurmurDescription<T, G> {
    /// True when no characteristic is given (the patient has no such murmur).
    pub fn is_empty(&self) -> bool {
        self.timing.is_none()
            && self.shape.is_none()
            && self.grading.is_none()
            && self.pitch.is_none()
            && self.quality.is_none()
    }
}

pub type SystolicMurmur = MurmurDescription<SystolicTiming, SystolicGrade>;
pub type DiastolicMurmur = MurmurDescription<DiastolicTiming, DiastolicGrade>;

/// The typed `#Key: value` lines of a patient file. `None` means the file says `nan` or has
/// no such line (the raw lines in [`PatientFile::annotations`](super::PatientFile::annotations)
/// tell the two apart).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PatientInfo {
    pub age: Option<AgeGroup>,
    pub sex: Option<Sex>,
    pub height_cm: Option<f64>,
    pub weight_kg: Option<f64>,
    pub pregnant: Option<bool>,
    /// The murmur label; `None` when the line is absent (validation/test files).
    pub murmur: Option<Murmur>,
    pub murmur_locations: Option<Vec<Site>>,
    pub most_audible_location: Option<Site>,
    pub systolic: SystolicMurmur,
    pub diastolic: DiastolicMurmur,
    /// The outcome label; `None` when the line is absent.
    pub outcome: Option<Outcome>,
    pub campaign: Option<Campaign>,
    pub additional_id: Option<String>,
}

fn is_nan(v: &str) -> bool {
    v.trim().eq_ignore_ascii_case("nan")
}

fn expected_list<E: ValueSet>(nan: bool) -> String {
    let mut names: Vec<&str> = E::ALL.iter().map(|e| e.text()).collect();
    if nan {
        names.push("nan");
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

fn find<E: ValueSet>(v: &str) -> Option<E> {
    let v = v.trim();
    E::ALL
        .iter()
        .copied()
        .find(|e| e.text().eq_ignore_ascii_case(v))
}

/// A closed-set value or `nan`.
fn opt_value<E: ValueSet>(v: &str) -> Result<Option<E>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    find(v).map(Some).ok_or_else(|| expected_list::<E>(true))
}

/// A label: a closed-set value, never `nan`.
fn label<E: ValueSet>(v: &str) -> Result<Option<E>, String> {
    find(v).map(Some).ok_or_else(|| expected_list::<E>(false))
}

fn opt_measure(v: &str) -> Result<Option<f64>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 => Ok(Some(x)),
        _ => Err("a non-negative number or nan".into()),
    }
}

fn opt_bool(v: &str) -> Result<Option<bool>, String> {
    let t = v.trim();
    if is_nan(t) {
        Ok(None)
    } else if t.eq_ignore_ascii_case("true") {
        Ok(Some(true))
    } else if t.eq_ignore_ascii_case("false") {
        Ok(Some(false))
    } else {
        Err("True, False or nan".into())
    }
}

fn opt_sites(v: &str) -> Result<Option<Vec<Site>>, String> {
    if is_nan(v) {
        return Ok(None);
    }
    v.trim()
        .split('+')
        .map(|s| Site::from_value(s).ok_or(()))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
        .map_err(|()| "locations from AV, PV, TV, MV and Phc joined by `+`, or nan".into())
}

impl PatientInfo {
    /// Types one `#key: value` line. `Ok(false)` for a key we do not know (kept raw only).
    pub(super) fn apply(&mut self, key: &str, v: &str) -> Result<bool, String> {
        use keys::*;
        match key {
            AGE => self.age = opt_value(v)?,
            SEX => self.sex = opt_value(v)?,
            HEIGHT => self.height_cm = opt_measure(v)?,
            WEIGHT => self.weight_kg = opt_measure(v)?,
            PREGNANCY_STATUS => self.pregnant = opt_bool(v)?,
            MURMUR => self.murmur = label(v)?,
            MURMUR_LOCATIONS => self.murmur_locations = opt_sites(v)?,
            MOST_AUDIBLE_LOCATION => self.most_audible_location = opt_value(v)?,
            SYSTOLIC_MURMUR_TIMING => self.systolic.timing = opt_value(v)?,
            SYSTOLIC_MURMUR_SHAPE => self.systolic.shape = opt_value(v)?,
            SYSTOLIC_MURMUR_GRADING => self.systolic.grading = opt_value(v)?,
            SYSTOLIC_MURMUR_PITCH => self.systolic.pitch = opt_value(v)?,
            SYSTOLIC_MURMUR_QUALITY => self.systolic.quality = opt_value(v)?,
            DIASTOLIC_MURMUR_TIMING => self.diastolic.timing = opt_value(v)?,
            DIASTOLIC_MURMUR_SHAPE => self.diastolic.shape = opt_value(v)?,
            DIASTOLIC_MURMUR_GRADING => self.diastolic.grading = opt_value(v)?,
            DIASTOLIC_MURMUR_PITCH => self.diastolic.pitch = opt_value(v)?,
            DIASTOLIC_MURMUR_QUALITY => self.diastolic.quality = opt_value(v)?,
            OUTCOME => self.outcome = label(v)?,
            CAMPAIGN => self.campaign = opt_value(v)?,
            ADDITIONAL_ID => {
                self.additional_id = (!is_nan(v)).then(|| v.trim().to_string());
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The `#Key: value` lines for this information, in the training files' order. Every
    /// field is written (`nan` for `None`) except the two labels, which are left out when
    /// `None`, as in the validation/test files. Heights and weights are written as Python
    /// writes a float (`98.0`, `11.075`), which is how the real files spell them; a NaN is
    /// written `NaN` and so reads back as not given.
    pub fn to_annotations(&self) -> Vec<Annotation> {
        use keys::*;
        fn text<E: ValueSet>(v: Option<E>) -> String {
            v.map_or_else(|| "nan".into(), |e| e.text().into())
        }
        let measure = |v: Option<f64>| v.map_or_else(|| "nan".into(), |x| format!("{x:?}"));
        let s = &self.systolic;
        let d = &self.diastolic;
        let mut out = vec![
            (AGE, text(self.age)),
            (SEX, text(self.sex)),
            (HEIGHT, measure(self.height_cm)),
            (WEIGHT, measure(self.weight_kg)),
            (
                PREGNANCY_STATUS,
                self.pregnant
                    .map_or("nan", |p| if p { "True" } else { "False" })
                    .into(),
            ),
        ];
        if let Some(m) = self.murmur {
            out.push((MURMUR, m.as_str().into()));
        }
        let sites = self.murmur_locations.as_ref().map_or_else(
            || "nan".into(),
            |l| l.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("+"),
        );
        out.extend([
            (MURMUR_LOCATIONS, sites),
            (MOST_AUDIBLE_LOCATION, text(self.most_audible_location)),
            (SYSTOLIC_MURMUR_TIMING, text(s.timing)),
            (SYSTOLIC_MURMUR_SHAPE, text(s.shape)),
            (SYSTOLIC_MURMUR_GRADING, text(s.grading)),
            (SYSTOLIC_MURMUR_PITCH, text(s.pitch)),
            (SYSTOLIC_MURMUR_QUALITY, text(s.quality)),
            (DIASTOLIC_MURMUR_TIMING, text(d.timing)),
            (DIASTOLIC_MURMUR_SHAPE, text(d.shape)),
            (DIASTOLIC_MURMUR_GRADING, text(d.grading)),
            (DIASTOLIC_MURMUR_PITCH, text(d.pitch)),
            (DIASTOLIC_MURMUR_QUALITY, text(d.quality)),
        ]);
        if let Some(o) = self.outcome {
            out.push((OUTCOME, o.as_str().into()));
        }
        out.push((CAMPAIGN, text(self.campaign)));
        out.push((
            ADDITIONAL_ID,
            self.additional_id.clone().unwrap_or_else(|| "nan".into()),
        ));
        out.into_iter()
            .map(|(k, v)| Annotation::new(k, v))
            .collect()
    }
}
